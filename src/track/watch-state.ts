/**
 * What a tracker publishes, read-only: its table's counts and its watcher's state, the view that
 * /ready (tracking.ts) and the metrics (metrics/track.ts) read. The heads the watcher wakes on
 * are the chain's (upstreams/chain-rpc/chain-heads.ts); the hooks of its passes are given to it
 * at construction (`WatchHooks`, the tracker's).
 */
import type { Block } from './blocks.js';

/** A tracker as its readers see it (tracker.ts implements it). */
export interface TrackView {
  /** Entries pending, and final (kept `keepMs`). */
  readonly pending: number;
  readonly final: number;
  /** Since start: final entries evicted from a full table before their `keepMs`, and acceptances a table full of pending ones refused. */
  readonly evicted: number;
  readonly refused: number;
  /** Since start: preconfirmed transactions the sealed block of their number left out (0 without a flashblocks stream). */
  readonly preconfirmationsLost: number;
  readonly watcher: WatchState;
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

/** The hooks of a watcher's passes, given at construction (the tracker's, tracker.ts). */
export interface WatchHooks {
  /** Called as a pass starts: the acceptances handed over and not yet read are taken first (seam/owner.ts). */
  readonly beforePass?: () => void;
  /** Told of each block applied, after its tracked transactions: the preconfirmations it left out (preconfirm.ts). */
  readonly sealed?: ((b: Block) => void) | null;
  /** Run at the end of every pass: the head it left, that block's time (-1: unknown), whether the pass still counts (expiry.ts). */
  readonly afterPass?: (head: number, time: number, live: () => boolean) => Promise<void>;
}
