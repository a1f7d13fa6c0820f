/**
 * The profiler's comparison (docs/performance.md, "The profiler"): each part of a scenario (its
 * stages in the pipeline's order, the answer, what lies outside them) and its total, base
 * against candidate, from rounds counted side by side. Pure: rounds in, verdicts out.
 *
 * A part is flagged dearer (or cheaper) when all three hold:
 * - its median paired difference (candidate round r less base round r) is above the noise this
 *   run measured for it: the wider of the two builds' own spreads (max − min of its rounds);
 * - it is above the part's floor: 5% of the base's figure, at least 2,000 instructions, and at
 *   least what the committed noise study saw the part move between two processes of one tree in
 *   any scenario (bench/results/guard.json's `parts`: a part can sit at one figure for a whole
 *   process and another in the next, which one run's rounds cannot show); the guard's tolerance
 *   for a total (guard.json, else 2%);
 * - every paired round points the same way (with 5 rounds, chance alone does so 1 time in 32).
 * The guard fails a scenario whose total is dearer than its tolerance (the median of the paired
 * ratios, as it always was), a stage flagged dearer, or bytes allocated beyond their tolerance.
 */
import { median } from '../common/figures.js';
import type { Compared, Direction, Figure } from '../common/results-schema.js';
import { OUTSIDE } from './attribute.js';
import type { Round } from './rounds.js';

/** A part's floor: 2% of the base's figure, at least this many instructions. */
export const PART_FLOOR = 2000;
const PART_SHARE = 0.05;
const TOTAL_SHARE = 0.02;

const k = (n: number) => `${(n / 1000).toFixed(1)}k`;

export function figure(base: readonly number[], candidate: readonly number[], floor: number): Figure {
  const d = base.map((b, i) => candidate[i]! - b);
  const delta = median(d);
  const range = (xs: readonly number[]) => Math.max(...xs) - Math.min(...xs);
  const noise = Math.max(range(base), range(candidate));
  const bound = Math.max(noise, floor);
  const allUp = d.every((x) => x > 0);
  const allDown = d.every((x) => x < 0);
  const verdict: Direction = delta > bound && allUp ? 'dearer' : delta < -bound && allDown ? 'cheaper' : 'same';
  const sign = (x: number) => `${x >= 0 ? '+' : '−'}${k(Math.abs(x))}`;
  const why =
    verdict !== 'same'
      ? `${sign(delta)}: every one of ${d.length} paired rounds ${verdict}, beyond this run's noise ${k(noise)} and the floor ${k(floor)}`
      : Math.abs(delta) <= bound
        ? `${sign(delta)} is within ${noise >= floor ? `this run's noise ${k(noise)}` : `the floor ${k(floor)}`}`
        : `${sign(delta)}, but the paired rounds do not all agree (${d.filter((x) => x > 0).length} of ${d.length} dearer)`;
  return { base: median(base), candidate: median(candidate), delta, noise, floor, verdict, why, rounds: { base, candidate } };
}

/**
 * One scenario's comparison from its rounds ([base, candidate], paired by index), its bytes
 * allocated per request ([base, candidate]) where counted, and the guard's tolerances.
 */
export function compare(
  scenario: string,
  rounds: readonly [readonly Round[], readonly Round[]],
  bytes: readonly [number, number] | undefined,
  tolerance: number | undefined,
  bytesTolerance: number | undefined,
  /** Each part's floor from the committed noise study (bench/results/guard.json), where it has one. */
  partFloors: Readonly<Record<string, { readonly floor: number }>> = {},
): Compared {
  let [b, c] = rounds;
  // Pairs in which either round still compiled or collected after its retries are left out while 3 clean pairs remain.
  const clean = b.flatMap((r, i) => (!r.dirty && !c[i]!.dirty ? [i] : []));
  if (clean.length >= 3 && clean.length < b.length) {
    b = clean.map((i) => b[i]!);
    c = clean.map((i) => c[i]!);
  }
  const names = [...new Set([...b, ...c].flatMap((r) => Object.keys(r.parts)))].filter((n) => n !== OUTSIDE);
  const of = (rs: readonly Round[], part: string) => rs.map((r) => r.parts[part] ?? 0);
  const parts = [...names, OUTSIDE].map((part) => {
    const base = of(b, part);
    return { part, ...figure(base, of(c, part), Math.max(PART_FLOOR, PART_SHARE * median(base), partFloors[part]?.floor ?? 0)) };
  });
  const tb = b.map((r) => r.total);
  const tc = c.map((r) => r.total);
  const t = figure(tb, tc, (tolerance ?? TOTAL_SHARE) * median(tb));
  const ratio = median(tc.map((x, i) => x / tb[i]!));
  const failed: string[] = [];
  if (tolerance !== undefined && ratio > 1 + tolerance) failed.push('total');
  for (const p of parts) if (p.verdict === 'dearer' && p.part !== OUTSIDE) failed.push(p.part);
  let bytesOut: Compared['bytes'];
  if (bytes?.every(Number.isFinite)) {
    const r = bytes[1] / bytes[0];
    const pass = bytesTolerance === undefined || r <= 1 + bytesTolerance;
    if (!pass) failed.push('bytes');
    bytesOut = { base: bytes[0], candidate: bytes[1], ratio: r, tolerance: bytesTolerance ?? null, pass };
  }
  const mean = (rs: readonly Round[], f: (r: Round) => number) => median(rs.map(f));
  const partSum = (rs: readonly Round[]) => [...names, OUTSIDE].reduce((a, n) => a + median(of(rs, n)), 0);
  return {
    scenario,
    pairs: rounds[0].length,
    leftOut: rounds[0].length - b.length,
    parts,
    total: { ...t, ratio, tolerance: tolerance ?? null },
    sum: { base: partSum(b), candidate: partSum(c) },
    gc: { base: mean(b, (r) => r.gc), candidate: mean(c, (r) => r.gc) },
    probes: { base: mean(b, (r) => r.probes), candidate: mean(c, (r) => r.probes) },
    ...(bytesOut !== undefined ? { bytes: bytesOut } : {}),
    failed,
  };
}
