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

/** Strings longer than this are told by their length, not shown: a secret put in the wrong field is never echoed. */
const SHOWN_STRING = 32;

/**
 * What a problem says it got: the type, and the value where it is short and safe to show
 * (`the string "28090"`, `70000`, `null`, `an array`); a long string by its length only.
 */
export function got(v: unknown): string {
  if (v === null) return 'got null';
  if (Array.isArray(v)) return `got an array of ${v.length}`;
  switch (typeof v) {
    case 'string':
      return v.length <= SHOWN_STRING ? `got the string ${JSON.stringify(v)}` : `got a string of ${v.length} characters`;
    case 'number':
      return `got ${Number.isFinite(v) ? String(v) : 'a number'}`;
    case 'boolean':
      return `got ${v}`;
    case 'object':
      return 'got an object';
    default:
      return `got ${typeof v}`;
  }
}

/** Edit distance (Levenshtein, a swap of two neighbours counting one) of two short strings, or Infinity once past `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return Infinity;
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      cur.push(d);
      if (d < best) best = d;
    }
    if (best > max) return Infinity;
    before = prev;
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * The known field an unknown one most likely meant: the same but for case, or the nearest by edit
 * distance within a third of its length (at most 3); null where none is near.
 */
export function nearest(key: string, known: readonly string[]): string | null {
  if (key.length > 64) return null;
  const lower = key.toLowerCase();
  const same = known.find((k) => k.toLowerCase() === lower);
  if (same !== undefined) return same;
  const max = Math.min(3, Math.max(1, Math.floor(key.length / 3)));
  let best: string | null = null;
  let bestD = max + 1;
  for (const k of known) {
    const d = distance(lower, k.toLowerCase(), max);
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return best;
}

/** Collects problems while reading a JSON value; each reader returns a default on a problem. */
export class Reader {
  /** `problems`: the list to add to (a caller's own, where it collects problems of its own too). */
  constructor(readonly problems: string[] = []) {}

  obj(v: unknown, field: string, known: readonly string[]): Obj {
    if (v === undefined) return {};
    if (!isObj(v)) {
      this.problems.push(`${field}: must be an object, ${got(v)}`);
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
      const near = nearest(k, known);
      this.problems.push(`${field}.${k.length > 64 ? `${k.slice(0, 64)}…` : k}: unknown field${near === null ? '' : ` (did you mean ${near}?)`}`);
    }
  }

  int(v: unknown, field: string, def: number, min: number, max: number): number {
    if (v === undefined) return def;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      this.problems.push(`${field}: must be an integer from ${min} to ${max}, ${got(v)}`);
      return def;
    }
    return v;
  }

  bool(v: unknown, field: string, def: boolean): boolean {
    if (v === undefined) return def;
    if (typeof v !== 'boolean') {
      this.problems.push(`${field}: must be true or false, ${got(v)}`);
      return def;
    }
    return v;
  }

  str(v: unknown, field: string, def: string): string {
    if (v === undefined) return def;
    if (typeof v !== 'string' || v.length === 0) {
      this.problems.push(`${field}: must be a non-empty string, ${typeof v === 'string' ? 'got an empty one' : got(v)}`);
      return def;
    }
    return v;
  }

  oneOf<T extends string>(v: unknown, field: string, def: T, allowed: readonly T[]): T {
    if (v === undefined) return def;
    if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
      const near = typeof v === 'string' ? nearest(v, allowed) : null;
      this.problems.push(`${field}: must be one of ${allowed.join(', ')}, ${got(v)}${near === null ? '' : ` (did you mean ${near}?)`}`);
      return def;
    }
    return v as T;
  }
}
