/**
 * What a watcher (watcher.ts) is given and what it publishes: the head source it wakes on, and
 * the view of its state that /ready (tracking.ts) and the metrics (metrics/track.ts) read.
 */

/** Where new heads come from: the chain RPC's subscription (sync/head-watch.ts), shared with the sync send. */
export interface HeadSource {
  readonly live: boolean;
  /** Calls `fn` on every head and change of `live`; returns the unsubscription. */
  listen(fn: () => void): () => void;
}

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
