/**
 * One callgrind dump read for what the profiler needs (docs/performance.md, "The profiler"): the
 * total, and the inclusive count and calls of the functions asked for by name, from the dump's
 * call edges (`cfn=` / `calls=` and the cost line after it: the callee's inclusive count for
 * those calls). A callee's inclusive count is the sum over its callers, leaving out calls from a
 * function of the same group (a collection that starts another would count twice). The file is
 * read as callgrind writes it (compressed names: `(id) name` the first time, `(id)` after);
 * anything else in it is skipped.
 */
import { readFileSync } from 'node:fs';

export interface Inclusive {
  /** Instructions, inclusive, over every call. */
  ir: number;
  calls: number;
}

export interface Dump {
  readonly total: number;
  /** By group: the functions whose name the group's test takes. */
  readonly groups: ReadonlyMap<string, Inclusive>;
}

/** Groups of functions by name: the profiler's probes, the collector, TurboFan. */
export type Groups = Readonly<Record<string, (fn: string) => boolean>>;

export function readDump(file: string, groups: Groups): Dump {
  return parseDump(readFileSync(file, 'utf8'), groups);
}

export function parseDump(text: string, groups: Groups): Dump {
  const names = new Map<string, string>();
  const groupOf = new Map<string, string | null>();
  const out = new Map<string, Inclusive>(Object.keys(groups).map((g) => [g, { ir: 0, calls: 0 }]));
  const entries = Object.entries(groups);
  /** `(id) name` or `(id)`: the name, remembered by id. */
  const nameOf = (v: string): string => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(v);
    if (m === null) return v;
    if (m[2] !== undefined) names.set(m[1]!, m[2]);
    return names.get(m[1]!) ?? v;
  };
  const group = (fn: string): string | null => {
    let g = groupOf.get(fn);
    if (g === undefined) {
      g = entries.find(([, test]) => test(fn))?.[0] ?? null;
      groupOf.set(fn, g);
    }
    return g;
  };
  let total = Number.NaN;
  let caller: string | null = null;
  let callee: string | null = null;
  let calls = -1;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (calls >= 0) {
      // The cost line after calls=: position, then the inclusive count.
      const ir = Number(l.trim().split(/\s+/)[1]);
      if (callee !== null && caller !== callee && Number.isFinite(ir)) {
        const o = out.get(callee)!;
        o.ir += ir;
        o.calls += calls;
      }
      calls = -1;
      continue;
    }
    if (l.startsWith('fn=')) caller = group(nameOf(l.slice(3)));
    else if (l.startsWith('cfn=')) callee = group(nameOf(l.slice(4)));
    else if (l.startsWith('calls=')) calls = Number(l.slice(6).split(' ')[0]);
    else if (l.startsWith('summary:') || l.startsWith('totals:')) total = Number(l.split(/\s+/)[1]);
  }
  return { total, groups: out };
}
