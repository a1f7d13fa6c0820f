/**
 * Where the benches' files are once built (dist/bench/…), in one place: every path a bench
 * spawns or writes is named here, so moving a file is one edit.
 */
import { join } from 'node:path';

/** The build's root (dist/). */
export const DIST = join(import.meta.dirname, '../..');
/** The repository's root. */
export const REPO = join(DIST, '..');
/** The committed figures: written only with `--save`. */
export const RESULTS_DIR = join(REPO, 'bench/results');
/** txgate's command line, as built. */
export const TXGATE_CLI = join(DIST, 'src/cli.js');

/** A child server (bench/servers/NAME.ts), as built. */
export const server = (name: 'stub-sequencer' | 'echo-server' | 'floor-server' | 'limit-server') => join(DIST, 'bench/servers', `${name}.js`);
/** A load driver or probe (bench/drivers/NAME.ts), as built. */
export const driver = (
  name: 'ws-client' | 'silence-client' | 'upstream-client' | 'latency-probe' | 'rate-probe' | 'stall-probe' | 'track-accept' | 'track-alloc' | 'gc-trace',
) => join(DIST, 'bench/drivers', `${name}.js`);
