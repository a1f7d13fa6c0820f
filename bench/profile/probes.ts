/**
 * The profiler's probes, built for a run, and the node flags its servers run with.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { NODE_FLAGS } from '../limit/flags.js';
import { REPO } from '../common/paths.js';

/** The probe slots native/stage-probe.c exports (the last is the calibration's inner probe). */
export const SLOTS = 64;

/**
 * bench:limit's flags (fixed seeds, no memory reducer) with a 64-MB young generation in place
 * of its 16 MB: a round of 300 valid submissions allocates about 5 MB, so a scavenge falls in
 * one round of about ten and is counted again (a collection inside a stage's probe is not the
 * stage's cost), where at 16 MB it fell in every third.
 */
export const PROFILE_FLAGS: readonly string[] = [
  ...NODE_FLAGS.filter((f) => !f.includes('semi-space')),
  '--min-semi-space-size=64',
  '--max-semi-space-size=64',
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
