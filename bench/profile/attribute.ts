/**
 * A round's count attributed to the stages (docs/performance.md, "The profiler"). Pure: the dump's
 * groups in, instructions per request by part out.
 *
 * Every stage of the pipeline (and the exit hook that writes the answer) ran through a probe of
 * its own (src/pipeline/probes.ts): a probe's inclusive count is its stage's cost on the request's
 * own path plus the probe's cost inside it (`inside`). The calibration pair, called once per
 * answer outside every other probe, measures both sides of one probe call: `inner`'s inclusive
 * count per call is the inside cost, and what the calib probe costs beyond the inner one it calls
 * is the inside cost again plus the call into a probe from JavaScript (`outside`: counted by
 * callgrind in the caller, here in what lies outside the stages). Taken off: each stage's inside
 * cost from it, and every probe call's outside cost and the calibration pair from the total, so
 * the total is what the unprobed request costs and the parts add up to it by what was counted,
 * the last part being what no probe ran: the front end's framing and body, the forward's
 * upstream read, the timers.
 */
import type { Dump } from './dump.js';

/** The dump's group names: `probe:N` (slot N), `calib`, `gc`, `jit`. */
export const probeGroup = (slot: number) => `probe:${slot}`;
export const CALIB = 'calib';
export const GC = 'gc';
export const JIT = 'jit';

/** Which functions are in which group (dump.ts's Groups), for `slots` probes. */
export function groupsFor(slots: number): Record<string, (fn: string) => boolean> {
  const g: Record<string, (fn: string) => boolean> = {
    [CALIB]: (fn) => fn === 'txgate_probe_calib',
    [GC]: (fn) => fn.startsWith('v8::internal::Heap::CollectGarbage('),
    // Compiling, lazily or for a tier up, and throwing optimized code away: a function's one-time costs, not a request's.
    [JIT]: (fn) => fn.startsWith('v8::internal::Runtime_Compile') || fn === 'Builtins_NotifyDeoptimized',
  };
  for (let i = 0; i < slots; i++) {
    // native/stage-probe.c names slot i by its two octal digits (slot 9: txgate_probe_11).
    const name = `txgate_probe_${i >> 3}${i & 7}`;
    g[probeGroup(i)] = (fn) => fn === name;
  }
  return g;
}

export interface Attributed {
  /** Answers in the round. */
  readonly n: number;
  /** Instructions per request of the unprobed request: the dump's total less compiling, collection and the probes' own cost. */
  readonly total: number;
  /** By part (a stage's name, `answer`, `outside`), per request; they add up to `total`. */
  readonly parts: Readonly<Record<string, number>>;
  /** The collector's instructions per request in the round (left out of every part and of the total). */
  readonly gc: number;
  /** TurboFan compiling, per request (left out likewise). */
  readonly jit: number;
  /** What the probes themselves cost per request (taken off). */
  readonly probes: number;
}

/** The name of what no probe ran. */
export const OUTSIDE = 'outside';

/**
 * `names`: slot → part name (the map the server wrote). The calibration's inner probe is the last
 * slot (`slots - 1`). A part whose probe was never called is absent.
 */
export function attribute(d: Dump, n: number, names: ReadonlyMap<number, string>, slots: number): Attributed {
  const g = (name: string) => d.groups.get(name) ?? { ir: 0, calls: 0 };
  const inner = g(probeGroup(slots - 1));
  const calib = g(CALIB);
  // A request answered before any pipeline (eth_chainId, the front end's own) calls no probe: all of it is outside.
  const calibrated = inner.calls > 0 && calib.calls > 0;
  const inside = calibrated ? inner.ir / inner.calls : 0;
  const outside = calibrated ? Math.max(0, (calib.ir - inner.ir) / calib.calls - inside) : 0;
  const gc = g(GC).ir;
  const jit = g(JIT).ir;
  let probeCalls = 0;
  const parts: Record<string, number> = {};
  for (const [slot, name] of names) {
    const p = g(probeGroup(slot));
    if (p.calls === 0) continue;
    if (!calibrated) throw new Error(`probe ${name} was called but not the calibration pair (src/pipeline/probes.ts): its cost cannot be taken off`);
    probeCalls += p.calls;
    // A stage that does less than the calibration's empty call (a check that returns at once)
    // reads a few instructions below zero: it reads 0, and those few stay in `outside`.
    parts[name] = (parts[name] ?? 0) + Math.max(0, (p.ir - p.calls * inside) / n);
  }
  const probes = probeCalls * outside + calib.ir + calib.calls * outside;
  const total = (d.total - gc - jit - probes - probeCalls * inside) / n;
  parts[OUTSIDE] = total - sumParts(parts);
  return { n, total, parts, gc: gc / n, jit: jit / n, probes: (probes + probeCalls * inside) / n };
}

const sumParts = (parts: Readonly<Record<string, number>>) => Object.values(parts).reduce((a, b) => a + b, 0);
