/**
 * What a watcher (watcher.ts) publishes: the view of its state that /ready (tracking.ts) and the
 * metrics (metrics/track.ts) read. The heads it wakes on are the chain's (upstreams/chain-rpc/chain-heads.ts).
 */

export interface WatchState {
  /** The last block applied (-1 before the first). */
  readonly head: number;
  /** The chain's head as last read (-1 before the first). */
  readonly chainHead: number;
  /** The watcher is stalled: a pass abandoned and none ended since, or its head lags the chain's by more than `maxLagBlocks`. */
  readonly stalled: boolean;
  readonly restarts: number;
  /** The last pass's problem (the chain RPC's failure in words), or null. */
  readonly problem: string | null;
}
