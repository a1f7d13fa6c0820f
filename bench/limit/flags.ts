/**
 * node's flags for every process bench:limit and the CI guard count: V8's seeds fixed (its hash
 * seed decides how maps and property tables lay out, its random seed what Math.random and the
 * heap's placement draw) and the young generation one fixed size (V8 grows it by what survives,
 * which differs from run to run), so that two runs of one tree do the same work. And no memory
 * reducer: a process idle for about 8 s runs a full collection that frees the maps no live object
 * has, and every optimized function built on them is thrown away ("weak objects"): the next
 * rounds ran in the interpreter and compiled again (docs/performance.md, "The guard").
 */
export const NODE_FLAGS: readonly string[] = [
  '--hash-seed=1',
  '--random-seed=1',
  '--min-semi-space-size=16',
  '--max-semi-space-size=16',
  '--no-memory-reducer',
];
