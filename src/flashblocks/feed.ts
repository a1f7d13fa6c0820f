/**
 * A chain's slices as this thread reads them, whoever reads the stream: the stream itself
 * (stream.ts, on the thread that owns it) or the slices it hands over to the other threads
 * (`FollowedFeed`, fed by threads/flashblocks-seam.ts). Its subscribers (the tracker, the sync
 * send) are told of every slice, in order; its transactions are remembered a little while
 * (recent.ts) for an acceptance or a sync call that comes after its slice.
 */
import type { Logger } from '../log/log.js';
import { type Preconf, Recent } from './recent.js';

/** A slice read: its block, its index, its transactions. */
export interface SliceRead {
  readonly number: number;
  readonly index: number;
  readonly txs: readonly Preconf[];
}

/** What a subscriber of a chain's stream reads. */
export interface FlashblocksSource {
  /** A transaction's preconfirmation in the block being built or the one before, if a slice carried it. */
  preconfirmation(hash: string): Preconf | undefined;
  /** Calls `fn` once when a slice carries `hash` (at once if one did); returns the cancellation. */
  waitFor(hash: string, fn: (p: Preconf) => void): () => void;
  /** Calls `fn` with every slice read (opening the stream on the first); returns the unsubscription. */
  subscribe(fn: (s: SliceRead) => void): () => void;
  /** Starts reading the stream, where nothing subscribes (idempotent). */
  open(): void;
}

export class SliceFeed implements FlashblocksSource {
  private readonly recent = new Recent();
  private readonly listeners = new Set<(s: SliceRead) => void>();

  constructor(
    protected readonly chainId: number,
    protected readonly log: Logger,
  ) {}

  preconfirmation(hash: string): Preconf | undefined {
    return this.recent.get(hash);
  }

  waitFor(hash: string, fn: (p: Preconf) => void): () => void {
    this.open();
    return this.recent.wait(hash, fn);
  }

  subscribe(fn: (s: SliceRead) => void): () => void {
    this.listeners.add(fn);
    this.open();
    return () => {
      this.listeners.delete(fn);
    };
  }

  /** Starts reading (the stream: its connection; a followed feed reads what it is handed). */
  open(): void {}

  /** A slice read: remembered, every subscriber told (one that throws is said, the others still told). */
  protected publish(slice: SliceRead): void {
    this.recent.add(slice.number, slice.txs);
    for (const fn of this.listeners) {
      try {
        fn(slice);
      } catch (e) {
        this.log.error({ chainId: this.chainId, err: e }, 'flashblocks: a subscriber failed on a slice');
      }
    }
  }
}

/** A chain's slices on a thread that does not read the stream: handed over by the thread that does (threads/flashblocks-seam.ts). */
export class FollowedFeed extends SliceFeed {
  take(slice: SliceRead): void {
    this.publish(slice);
  }
}
