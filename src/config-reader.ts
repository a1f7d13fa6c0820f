/**
 * Reading a JSON value field by field while collecting every problem, each naming its field: a
 * reader returns the default on a problem, so validation goes on and all problems are reported
 * at once (fastify's initial-config-validation is the model).
 */
export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Collects problems while reading a JSON value; each reader returns a default on a problem. */
export class Reader {
  readonly problems: string[] = [];

  obj(v: unknown, field: string, known: readonly string[]): Obj {
    if (v === undefined) return {};
    if (!isObj(v)) {
      this.problems.push(`${field}: must be an object`);
      return {};
    }
    for (const k of Object.keys(v)) if (!known.includes(k)) this.problems.push(`${field}.${k}: unknown field`);
    return v;
  }

  int(v: unknown, field: string, def: number, min: number, max: number): number {
    if (v === undefined) return def;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      this.problems.push(`${field}: must be an integer from ${min} to ${max}`);
      return def;
    }
    return v;
  }

  bool(v: unknown, field: string, def: boolean): boolean {
    if (v === undefined) return def;
    if (typeof v !== 'boolean') {
      this.problems.push(`${field}: must be true or false`);
      return def;
    }
    return v;
  }

  str(v: unknown, field: string, def: string): string {
    if (v === undefined) return def;
    if (typeof v !== 'string' || v.length === 0) {
      this.problems.push(`${field}: must be a non-empty string`);
      return def;
    }
    return v;
  }

  oneOf<T extends string>(v: unknown, field: string, def: T, allowed: readonly T[]): T {
    if (v === undefined) return def;
    if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
      this.problems.push(`${field}: must be one of ${allowed.join(', ')}`);
      return def;
    }
    return v as T;
  }
}
