/**
 * Reading a JSON value field by field while collecting every problem, each naming its field: a
 * reader returns the default on a problem, so validation goes on and all problems are reported
 * at once (fastify's initial-config-validation is the model). The configuration (through
 * config-fields.ts) and the account documents (accounts/parse.ts) read with it.
 */
export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Unknown fields named in one object at most (a document with a million stray keys is named once, counted). */
const MAX_UNKNOWN = 20;

/** Collects problems while reading a JSON value; each reader returns a default on a problem. */
export class Reader {
  /** `problems`: the list to add to (a caller's own, where it collects problems of its own too). */
  constructor(readonly problems: string[] = []) {}

  obj(v: unknown, field: string, known: readonly string[]): Obj {
    if (v === undefined) return {};
    if (!isObj(v)) {
      this.problems.push(`${field}: must be an object`);
      return {};
    }
    this.known(v, field, known);
    return v;
  }

  /** Each field of `o` not in `known` is a problem (a hostile key is cut to 64 characters; past MAX_UNKNOWN, one line). */
  known(o: Obj, field: string, known: readonly string[]): void {
    let n = 0;
    for (const k in o) {
      if (known.includes(k)) continue;
      if (++n > MAX_UNKNOWN) {
        this.problems.push(`${field}: more unknown fields`);
        return;
      }
      this.problems.push(`${field}.${k.length > 64 ? `${k.slice(0, 64)}…` : k}: unknown field`);
    }
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
