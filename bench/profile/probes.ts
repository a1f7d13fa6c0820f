/**
 * The profiler's probes, built for a run, and the node flags its servers run with.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO } from '../common/paths.js';

/** The probe slots native/stage-probe.c exports (the last is the calibration's inner probe). */
export const SLOTS = 64;

/**
 * node's flags for every process the callgrind benches count (the profiler, the guard,
 * bench:limit): V8's seeds fixed (its hash seed decides how maps and property tables lay out,
 * its random seed what Math.random and the heap's placement draw) and the young generation one
 * fixed size (V8 grows it by what survives, which differs from run to run), so that two runs of
 * one tree do the same work; 64 MB, so that a round of 200-300 valid submissions (about 5 MB)
 * holds a scavenge once in about ten rounds, and that one is counted again (a collection inside a
 * stage's probe is not the stage's cost). And no memory reducer: a process idle for about 8 s
 * runs a full collection that frees the maps no live object has, and every optimized function
 * built on them is thrown away ("weak objects"): the next rounds ran in the interpreter and
 * compiled again (docs/performance.md, "After an idle spell").
 */
export const PROFILE_FLAGS: readonly string[] = [
  '--hash-seed=1',
  '--random-seed=1',
  '--min-semi-space-size=64',
  '--max-semi-space-size=64',
  '--no-memory-reducer',
];

/** Builds the probes into `dir` (scripts/build-probe.sh); returns the .node file's path, or ends the run with the reason. */
export function buildProbes(dir: string): string {
  const out = join(dir, 'stage-probe.node');
  const r = spawnSync('bash', [join(REPO, 'scripts/build-probe.sh'), out], { encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(`bench:profile: the stage probes did not build: ${(r.stderr || r.stdout).trim().split('\n').at(-1)}\n`);
    process.exit(1);
  }
  return out;
}
