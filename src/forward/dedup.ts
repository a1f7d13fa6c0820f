/**
 * Duplicate suppression for one chain (docs/design.md §5.8): identical bytes in flight share one
 * forward and a hash accepted moments ago (`dedup.acceptedTtlMs`) is answered at once, neither
 * spending a rate-limit token; the sync calls waiting now have a table of their own (their answer
 * is a receipt), which a resend joins. Both tables hold flights (flight.ts). With several worker
 * threads the in-flight and accepted hashes are shared (SharedTxTable): it holds per process.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { Flight } from './flight.js';
import type { SharedTxTable } from '../limits/shared-tables.js';
import { InFlight } from '../base/in-flight.js';

/** Bounded set of recently accepted hashes with expiry (insertion order = expiry order). */
export class RecentlyAccepted {
  private readonly expiry = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
  ) {}

  /** The clock read only where a hash is held. */
  has(hash: string): boolean {
    if (this.ttlMs === 0) return false;
    const t = this.expiry.get(hash);
    if (t === undefined) return false;
    if (t > performance.now()) return true;
    this.expiry.delete(hash);
    return false;
  }

  delete(hash: string): void {
    this.expiry.delete(hash);
  }

  /** Hashes held, expired ones not yet evicted included. */
  get size(): number {
    return this.expiry.size;
  }

  add(hash: string): void {
    if (this.ttlMs === 0) return;
    const now = performance.now();
    this.expiry.delete(hash);
    this.expiry.set(hash, now + this.ttlMs);
    // From the front: the oldest beyond the bound, and at most two expired ones an add (after a silence all have
    // expired, and evicting 1,000 on the first add held its answer 0.9-1.4 ms: docs/performance.md).
    let expired = 0;
    for (const [h, t] of this.expiry) {
      if (this.expiry.size <= this.max && (t > now || expired++ === 2)) break;
      this.expiry.delete(h);
    }
  }
}

/** What a forward of these bytes should do. */
export type Claim = 'accepted' | 'claimed' | 'elsewhere' | Flight;

export class ChainDuplicates {
  /** The plain sends in flight on this thread, by hash (in-flight.ts: nothing allocated as they come and go). */
  readonly pending = new InFlight<Flight>();
  /** Sync calls waiting now, by hash (sync-send.ts): a resend joins the call. */
  readonly waiting = new InFlight<Flight>();
  private readonly recent: RecentlyAccepted;

  constructor(
    private readonly dedup: { readonly acceptedTtlMs: number; readonly maxEntries: number },
    /** With several worker threads: in-flight and accepted hashes shared across them. */
    private readonly shared: SharedTxTable | null = null,
  ) {
    this.recent = new RecentlyAccepted(dedup.acceptedTtlMs, dedup.maxEntries);
  }

  /** Being forwarded now, or accepted within the window: a resubmission, not new work. */
  isDuplicate(hash: string): boolean {
    return this.pending.has(hash) || this.waiting.has(hash) || this.recent.has(hash) || (this.shared !== null && this.shared.peek(hash) !== 'none');
  }

  /** Before a forward: accepted (answer at once), the flight here (join it), elsewhere (another thread's), or claimed (send). */
  claim(hash: string): Claim {
    if (this.recent.has(hash)) return 'accepted';
    const here = this.pending.get(hash);
    if (here !== undefined) return here;
    if (this.shared !== null) {
      const c = this.shared.claim(hash);
      if (c === 'accepted') return 'accepted';
      if (c === 'in_flight') return 'elsewhere';
    }
    return 'claimed';
  }

  /** Waits for another thread's forward of these bytes: true if accepted; false: this thread forwards (claimed, or waited out). */
  async awaitElsewhere(hash: string, deadline: number): Promise<boolean> {
    const shared = this.shared!;
    for (;;) {
      const mark = shared.mark();
      const s = shared.peek(hash);
      if (s === 'accepted') return true;
      const left = deadline - performance.now();
      if (s === 'none' || left <= 0) {
        const c = shared.claim(hash);
        // Another thread claimed them since the peek: its outcome, within the wait, as for the first.
        if (c === 'in_flight' && left > 0) continue;
        return c === 'accepted';
      }
      await shared.settled(mark, left);
    }
  }

  /** The claimed hash's forward ended, accepted (remembered for the window: the shared table's alone with several threads) or not. */
  settle(hash: string, accepted: boolean): void {
    if (this.shared === null) {
      if (accepted) this.recent.add(hash);
    } else this.shared.settle(hash, accepted, this.dedup.acceptedTtlMs);
  }

  /** A hash the tracker found dropped (docs/tracking.md#the-states): a resend of its bytes is forwarded again; one in flight is left alone. */
  forget(hash: string): void {
    this.recent.delete(hash);
    if (this.shared !== null && this.shared.peek(hash) === 'accepted') this.shared.settle(hash, false, 0);
  }

  /** A claimed hash that was never forwarded (refused before): let the next one try. */
  release(hash: string): void {
    this.shared?.settle(hash, false, 0);
  }
}

/** Every chain's duplicate suppression, by chain id (the rate-limit stage's view). */
export class Duplicates {
  constructor(private readonly byChain: ReadonlyMap<number, ChainDuplicates>) {}

  forChain(chainId: number): ChainDuplicates {
    return this.byChain.get(chainId)!;
  }

  isDuplicate(chainId: number, hash: string): boolean {
    return this.byChain.get(chainId)?.isDuplicate(hash) === true;
  }
}
