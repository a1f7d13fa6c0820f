/**
 * Stage probes, for the profiler (docs/performance.md, "The profiler"): with TXGATE_STAGE_PROBES
 * naming the built native/stage-probe.c, every pipeline calls each stage's `run`, and the exit
 * hook that writes the answer, through a native function of its own (a symbol callgrind names),
 * so that a stage's inclusive count is what it costs on the request's own path. Each stage name
 * and the answer get one slot for the whole process, whichever pipeline (HTTP, WebSocket lane)
 * runs them; the slots' names are written to TXGATE_STAGE_PROBES_MAP (JSON: slot → name) as they
 * are given out. Every answer also calls the calibration pair once (slot CALIB_INNER through the
 * calib symbol, outside any other probe): what one probe costs on each side of its call, which
 * the profiler takes off. Unset (every deployment), nothing here runs: the pipeline is built
 * as it always is.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { BaseCtx } from './context.js';

interface ProbeAddon {
  readonly slots: readonly ((fn: (x: unknown) => unknown, arg: unknown) => unknown)[];
  readonly calib: (probe: (fn: (x: unknown) => unknown, arg: unknown) => unknown, fn: (x: unknown) => unknown) => unknown;
  readonly count: number;
}

/** The slot the calibration pair calls through (the last one); the answer's is the one before it. */
export const ANSWER = 'answer';

let addon: ProbeAddon | null | undefined;
const slotOf = new Map<string, number>();

function loaded(): ProbeAddon | null {
  if (addon !== undefined) return addon;
  const path = process.env.TXGATE_STAGE_PROBES;
  addon = path === undefined || path === '' ? null : (createRequire(import.meta.url)(path) as ProbeAddon);
  return addon;
}

/** The slot of a name (given out in order of first use; the last slot is the calibration's). */
function slot(a: ProbeAddon, name: string): number {
  let s = slotOf.get(name);
  if (s === undefined) {
    s = slotOf.size;
    if (s >= a.count - 1) throw new Error(`stage probes: more than ${a.count - 1} names`);
    slotOf.set(name, s);
    const map = process.env.TXGATE_STAGE_PROBES_MAP;
    if (map !== undefined && map !== '') writeFileSync(map, JSON.stringify(Object.fromEntries([...slotOf].map(([n, i]) => [i, n]))));
  }
  return s;
}

const noop = (x: unknown) => x;

/**
 * The stages and exit hook a pipeline runs: as given, or (probes loaded) each through its probe.
 * A stage's `this` is kept (its run is bound); a throw goes through the probe as it would.
 */
export function probed<S extends { readonly name: string; run(ctx: BaseCtx): unknown }, E extends (...args: never[]) => void>(
  stages: readonly S[],
  exit: E,
): { stages: readonly S[]; exit: E } {
  const a = loaded();
  if (a === null) return { stages, exit };
  const wrapped = stages.map((s) => {
    const probe = a.slots[slot(a, s.name)]!;
    const run = s.run.bind(s) as (x: unknown) => unknown;
    return Object.assign(Object.create(Object.getPrototypeOf(s) as object) as S, s, { run: (ctx: BaseCtx) => probe(run, ctx) });
  });
  const answer = a.slots[slot(a, ANSWER)]!;
  const inner = a.slots[a.count - 1]!;
  const exitProbed = ((...args: Parameters<E>) => {
    a.calib(inner, noop);
    answer((xs) => exit(...(xs as Parameters<E>)), args);
  }) as unknown as E;
  return { stages: wrapped, exit: exitProbed };
}
