/**
 * The CI guard's committed file (docs/performance.md, "The guard"): the base commit and each
 * guarded scenario's tolerance, derived from the spread of candidate / base over repeated runs
 * of one tree against itself. The verdict itself is the profiler's (bench/profile/verdict.ts).
 * Pure: no measuring here.
 */

/** The committed guard file (bench/results/guard.json): the base tree and the tolerances. */
export interface GuardFile {
  /** The commit whose build is the base: the tree the committed figures were measured at. */
  readonly commit: string;
  readonly date: string;
  /** Per scenario: the tolerance (a fraction: 0.02 is 2%) and the noise it was derived from. */
  readonly scenarios: Readonly<Record<string, { readonly tolerance: number; readonly noise: Noise }>>;
  /**
   * Per part (a stage, the answer, outside), in every scenario: the smallest difference the
   * profiler flags, from the same runs: the worst the part moved between two processes of one
   * tree in any scenario, 1.5 times over. A part can sit at one figure for a whole process and
   * another in the next, which one run's rounds cannot show (the forward stage at about 14k or 20k
   * a request to an http:// sequencer, 16k or 26k to a ws:// one, every round of the process).
   */
  readonly parts?: Readonly<Record<string, PartNoise>>;
}

/** candidate / base over repeated runs of one tree (an unchanged tree against itself). */
export interface Noise {
  readonly runs: number;
  readonly ratios: readonly number[];
  /** max |ratio − 1| over the runs. */
  readonly worst: number;
}

/**
 * How a tolerance follows from the noise: the worst excursion seen, half as much again, at least
 * 1%. Half again, not twice: the runs of one tree spread about 1.3% (σ) on a valid submission,
 * their worst of several about 2-3%, so twice that (5-6%) would let the 5% regression the guard
 * is for through, and 1.5 times it still puts a tree against itself a σ or more inside.
 */
export function toleranceOf(ratios: readonly number[]): { tolerance: number; noise: Noise } {
  const worst = Math.max(0, ...ratios.map((r) => Math.abs(r - 1)));
  // rounded up to 0.1% (after rounding away the float error of the product)
  return { tolerance: Math.max(0.01, Math.ceil(Math.round(worst * 1.5 * 1e6) / 1000) / 1000), noise: { runs: ratios.length, ratios, worst } };
}

/** A part's floor and the differences it came from (instructions per request). */
export interface PartNoise {
  readonly floor: number;
  readonly worst: number;
  readonly runs: number;
}

/** A part's floor from the differences seen between two processes of one tree: the worst, 1.5 times over, rounded up to 100 instructions. */
export function partFloorOf(deltas: readonly number[]): PartNoise {
  const worst = Math.max(0, ...deltas.map(Math.abs));
  return { floor: Math.ceil((worst * 1.5) / 100) * 100, worst: Math.round(worst), runs: deltas.length };
}

/** The name a scenario's bytes allocated per request are guarded under (beside its instructions). */
export const allocatedName = (scenario: string) => `${scenario} (bytes allocated)`;
