/**
 * A tracked chain's preconfirmations (`chains[].flashblocks`, docs/flashblocks.md): a pending
 * transaction a slice of the builder's stream carries is `preconfirmed` (the block being built,
 * the slice's index, the slice receipt's status where it has one), pushed as every change; the
 * sealed block still makes it `included` (the watcher). A preconfirmed transaction the sealed
 * block of its number leaves out goes back to `pending`, counted (`lost`), pushed, and is
 * followed as any pending one. A slice of a block the watcher has applied already says nothing
 * new (not taken). Nothing here runs on a chain without the stream.
 */
import type { FlashblocksSource, SliceRead } from '../flashblocks/feed.js';
import type { Preconf } from '../flashblocks/recent.js';
import type { Block } from './blocks.js';
import type { Entry, TrackTable } from './table.js';

export class Preconfirmations {
  /** The entries now preconfirmed (a few slices' worth of acceptances). */
  private readonly held = new Set<Entry>();
  /** Preconfirmations a sealed block left out, since start. */
  lost = 0;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly table: TrackTable,
    private readonly source: FlashblocksSource,
    /** The last block the watcher applied (-1 before the first). */
    private readonly head: () => number,
    /** The acceptances other threads handed over, read first (seam/owner.ts). */
    private readonly catchUp: () => void,
    /** An entry back in no block: looked up and checked again, as a new acceptance (the watcher's; a replacement is looked for from now: none could land before the block that left it out). */
    private readonly recheck: (e: Entry) => void,
  ) {
    this.unsubscribe = source.subscribe((s) => this.slice(s));
  }

  /** A new acceptance: preconfirmed at once where a slice carried it before its acceptance was known here. */
  accepted(e: Entry): void {
    const p = this.source.preconfirmation(e.hash);
    if (p !== undefined) this.mark(e, p);
  }

  private slice(s: SliceRead): void {
    if (s.number <= this.head()) return;
    this.catchUp();
    for (const p of s.txs) {
      const e = this.table.get(p.hash);
      if (e !== undefined) this.mark(e, p);
    }
  }

  private mark(e: Entry, p: Preconf): void {
    if (e.state !== 'pending' || p.number <= this.head()) return;
    e.at = { kind: 'preconfirmed', number: p.number, index: p.index, status: p.receipt?.status ?? null, seenAt: p.seenAt };
    this.held.add(e);
    this.table.move(e, 'preconfirmed', p.seenAt);
  }

  /**
   * A sealed block applied (after its tracked transactions were): a preconfirmed entry of its
   * number it does not carry is lost (pending again, counted); one of an earlier number (a block
   * applied before the slice's was known, or skipped) is pending again, not counted: looked up.
   */
  sealed(b: Block): void {
    if (this.held.size === 0) return;
    let carried: Set<string> | null = null;
    for (const e of this.held) {
      if (e.state !== 'preconfirmed' || e.at?.kind !== 'preconfirmed') {
        this.held.delete(e);
        continue;
      }
      if (e.at.number > b.number) continue;
      if (e.at.number === b.number) {
        carried ??= new Set(b.txs.map((h) => (typeof h === 'string' ? h.toLowerCase() : '')));
        if (carried.has(e.hash)) continue; // the watcher includes it (or looks its receipt up again)
        this.lost++;
      }
      this.held.delete(e);
      e.at = null;
      this.table.move(e, 'pending', Date.now());
      this.recheck(e);
    }
  }

  close(): void {
    this.unsubscribe();
  }
}
