/**
 * node's flags for every process bench:limit and the CI guard count: V8's seeds fixed (its hash
 * seed decides how maps and property tables lay out, its random seed what Math.random and the
 * heap's placement draw) and the young generation one fixed size (V8 grows it by what survives,
 * which differs from run to run), so that two runs of one tree do the same work.
 */
export const NODE_FLAGS: readonly string[] = ['--hash-seed=1', '--random-seed=1', '--min-semi-space-size=16', '--max-semi-space-size=16'];
