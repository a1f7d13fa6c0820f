/**
 * What a bench may call a figure, written once for every bench and the README's table:
 * - a median is of an odd number of rounds, 3 or more (`medianName`); anything else is named for
 *   what it is (one round, the range of an even count) and never called a median;
 * - a figure below its reference (an "added" latency under zero) or from rounds that spread past
 *   their bound is flagged where it is printed (`flagged`, `noisyNote`);
 * - a time per operation at the timer's resolution is not a figure (`belowTimer`);
 * - a quick run says how its settings differ from the committed run's (`differsFrom`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Whether `n` rounds have a median (an odd count, 3 or more). */
export const hasMedian = (n: number): boolean => n >= 3 && n % 2 === 1;

/** How a figure from `n` rounds is named: "median of 3 rounds", or what it is instead. */
export function medianName(n: number): string {
  if (hasMedian(n)) return `median of ${n} rounds`;
  return n === 1 ? 'one round (no median)' : `upper middle of ${n} rounds (an even count: no median)`;
}

/** A refused `--rounds`: the reason, or null when the count has a median. */
export function roundsProblem(n: number): string | null {
  return hasMedian(n) ? null : `--rounds wants an odd number ≥ 3 (a median of the rounds is reported), got ${n}`;
}

/** (max − min) / median of the rounds, or 0 for fewer than two. */
export function roundsSpread(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted[sorted.length >> 1]!;
  return mid === 0 ? 0 : (sorted.at(-1)! - sorted[0]!) / Math.abs(mid);
}

/** Rounds spread past this are flagged noisy where their figure is shown (the benches' req/s). */
export const NOISY_SPREAD = 0.1;

/** " ⚠ noisy: rounds spread 23.5%" when the rounds spread past `bound`, else "". */
export function noisyNote(spread: number, bound = NOISY_SPREAD): string {
  return spread > bound ? ` ⚠ noisy: rounds spread ${Number((spread * 100).toFixed(1))}%` : '';
}

/** A chart bar's note: `text`, flagged where the rounds behind it spread past `bound` (the SVG says so, as the table does). */
export function barNote(text: string, spread: number, bound: number): string {
  return spread > bound ? `${text} ⚠ NOISY: rounds spread ${Number((spread * 100).toFixed(1))}%` : text;
}

/**
 * An added figure (txgate's path minus the reference's) as printed: below zero it is no cost
 * txgate has but the reference's own noise, and says so.
 */
export function flagged(n: number, unit = 'µs'): string {
  const v = unit === '' ? String(n) : `${n} ${unit}`;
  return n < 0 ? `${v} ⚠ below the reference (its own noise: not a figure)` : v;
}

/** The smallest step performance.now() advances by here, in ms (measured once). */
let resolution: number | null = null;
export function timerResolutionMs(): number {
  if (resolution !== null) return resolution;
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 200; i++) {
    const a = performance.now();
    let b = performance.now();
    while (b === a) b = performance.now();
    best = Math.min(best, b - a);
  }
  resolution = best;
  return best;
}

/** Whether a time per operation (ms) is within a few ticks of the timer: an artifact, not a figure. */
export const belowTimer = (ms: number, tick = timerResolutionMs()): boolean => !(ms > 4 * tick);

/**
 * How a run's settings differ from the committed run's (bench/results/`file`), as one line for
 * its output: "" when they match or nothing is committed. `settings` are the run's own, by the
 * committed JSON's field names; `read` reads a committed field (default: the top-level one).
 */
export function differsFrom(
  resultsDir: string,
  file: string,
  settings: Readonly<Record<string, number | string>>,
  read: (doc: Record<string, unknown>, key: string) => unknown = (doc, key) => doc[key],
): string {
  const path = join(resultsDir, file);
  if (!existsSync(path)) return '';
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return '';
  }
  const diffs = Object.entries(settings)
    .map(([k, v]) => ({ k, v, c: read(doc, k) }))
    .filter((d) => d.c !== undefined && String(d.c) !== String(d.v))
    .map((d) => `${d.k} ${d.v} (committed: ${String(d.c)})`);
  return diffs.length === 0 ? '' : `this run differs from the committed bench/results/${file}: ${diffs.join(', ')}; compare ratios, not absolute figures`;
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** The item with the median key (the upper one of an even count). */
export function medianBy<T>(xs: readonly T[], key: (x: T) => number): T {
  return [...xs].sort((a, b) => key(a) - key(b))[Math.floor(xs.length / 2)]!;
}

export function median(xs: readonly number[]): number {
  return medianBy(xs, (x) => x);
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
