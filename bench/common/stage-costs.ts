/**
 * Per-stage costs from requests that exit at consecutive stages (bench:instr), and the rounds'
 * noise check. Pure functions over instructions per request, one number per measured round.
 *
 * A stage's cost is the exit at it less the exit before it. Two figures are given for it:
 * - the paired rounds: round r of the exit at the stage less round r of the exit before it (the
 *   rounds of every exit are interleaved, so round r of each ran side by side). With R rounds,
 *   the smallest and largest of the R differences bound the median difference with a
 *   distribution-free confidence of 1 − 2^(1−R) (75% at 3 rounds, 94% at 5): the interval is
 *   the resolution of the run. A stage whose interval does not lie above zero is "not resolved".
 * - the cost: the exits' medians made non-decreasing in pipeline order (the isotonic fit, by
 *   pool-adjacent-violators: an exit that came out below the one before it is pooled with it),
 *   so every stage's cost is ≥ 0 and the costs add up to the last exit's fitted total. Each later
 *   exit runs every earlier stage's work, so the true exits are non-decreasing up to what their
 *   answers differ by; a pooled exit is shown as such, never as a negative cost.
 */
import { median } from './figures.js';

export interface ExitRounds {
  readonly stage: string;
  /** Instructions per request, one per measured round, in round order. */
  readonly rounds: readonly number[];
}

export interface StageCost {
  readonly stage: string;
  /** The exit's median over its rounds. */
  readonly exit: number;
  /** The exit after the isotonic fit (≥ the one before). */
  readonly fitted: number;
  /** fitted − the previous fitted (the base for the first stage): never negative. */
  readonly cost: number;
  /** The paired rounds' differences to the previous exit: their median and range. */
  readonly paired: { readonly median: number; readonly lo: number; readonly hi: number };
  /** The paired range lies above zero. */
  readonly resolved: boolean;
  /** The exit's median came out below the one before it, and was pooled with it. */
  readonly pooled: boolean;
}

/** The confidence that the range of R paired differences holds their median: 1 − 2^(1−R). */
export function pairedConfidence(rounds: number): number {
  return 1 - 2 ** (1 - rounds);
}

/** Least-squares non-decreasing fit (pool adjacent violators), equal weights. */
export function isotonic(xs: readonly number[]): number[] {
  const blocks: { sum: number; n: number }[] = [];
  for (const x of xs) {
    blocks.push({ sum: x, n: 1 });
    while (blocks.length > 1) {
      const b = blocks.at(-1)!;
      const a = blocks.at(-2)!;
      if (a.sum / a.n <= b.sum / b.n) break;
      blocks.pop();
      a.sum += b.sum;
      a.n += b.n;
    }
  }
  return blocks.flatMap((b) => Array<number>(b.n).fill(b.sum / b.n));
}

/**
 * Each stage's cost over `base` (the bare front end), the stages in pipeline order. Rounds are
 * paired by index; a scenario with fewer rounds pairs the rounds it has.
 */
export function stageCosts(base: ExitRounds, stages: readonly ExitRounds[]): StageCost[] {
  const medians = stages.map((s) => median(s.rounds));
  const baseMedian = median(base.rounds);
  // The base is fixed: the fit is bounded below by it (clipping the unbounded fit is the
  // bounded least-squares fit).
  const fitted = isotonic(medians).map((x) => Math.max(x, baseMedian));
  return stages.map((s, i) => {
    const prev = i === 0 ? base : stages[i - 1]!;
    const n = Math.min(prev.rounds.length, s.rounds.length);
    const diffs = Array.from({ length: n }, (_, r) => s.rounds[r]! - prev.rounds[r]!);
    const lo = Math.min(...diffs);
    const hi = Math.max(...diffs);
    const f = fitted[i]!;
    const before = i === 0 ? baseMedian : fitted[i - 1]!;
    return {
      stage: s.stage,
      exit: medians[i]!,
      fitted: f,
      cost: Math.max(0, f - before),
      paired: { median: median(diffs), lo, hi },
      resolved: lo > 0,
      pooled: medians[i]! < (i === 0 ? baseMedian : medians[i - 1]!),
    };
  });
}

/** (max − min) / median of the rounds. */
export function spread(rounds: readonly number[]): number {
  return (Math.max(...rounds) - Math.min(...rounds)) / median(rounds);
}

/**
 * The rounds to measure again when the spread is over `bound`: those farther than bound / 2 from
 * the median (when every round is within that band the spread is at most the bound).
 */
export function noisyRounds(rounds: readonly number[], bound: number): number[] {
  if (spread(rounds) <= bound) return [];
  const m = median(rounds);
  return rounds.flatMap((x, i) => (Math.abs(x - m) > (bound / 2) * m ? [i] : []));
}
