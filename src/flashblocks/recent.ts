/**
 * The preconfirmations a stream has read and the sealed blocks have not yet overtaken: by hash,
 * for the block being built and the one before it (a transaction's acceptance may be known after its slice: the
 * sequencer's answer and the slice race), bounded; and the hashes a sync call waits for, told
 * once as their slice is read.
 */
import type { SliceReceipt } from './slice.js';

/** A transaction in a slice. */
export interface Preconf {
  readonly hash: string;
  /** The block being built and the slice's index in it. */
  readonly number: number;
  readonly index: number;
  /** Its place in the block where every slice before it was read, else null. */
  readonly position: number | null;
  /** The slice's receipt of it, where the slice carries one. */
  readonly receipt: SliceReceipt | null;
  /** When the slice was read (epoch ms). */
  readonly seenAt: number;
}

/** Hashes remembered at most (a hostile stream's slices may name any number). */
const MAX_REMEMBERED = 100_000;

export class Recent {
  private readonly byHash = new Map<string, Preconf>();
  /** Each block's hashes, oldest block first: a block two behind the newest is forgotten. */
  private readonly blocks = new Map<number, string[]>();
  private readonly waiting = new Map<string, Set<(p: Preconf) => void>>();

  get size(): number {
    return this.byHash.size;
  }

  get(hash: string): Preconf | undefined {
    return this.byHash.get(hash);
  }

  /** A slice's transactions: remembered (the first slice that carries a hash wins), waiters told. */
  add(number: number, ps: readonly Preconf[]): void {
    this.keepOnly(number - 1, number);
    let hashes = this.blocks.get(number);
    if (hashes === undefined) this.blocks.set(number, (hashes = []));
    for (const p of ps) {
      const old = this.byHash.get(p.hash);
      if ((old === undefined || old.number !== number) && this.byHash.size < MAX_REMEMBERED) {
        this.byHash.set(p.hash, p);
        hashes.push(p.hash);
      }
      if (this.waiting.size === 0) continue;
      const fns = this.waiting.get(p.hash);
      if (fns === undefined) continue;
      this.waiting.delete(p.hash);
      for (const fn of fns) fn(p);
    }
  }

  /** Calls `fn` once when `hash` is read in a slice (at once if it was); returns the cancellation. */
  wait(hash: string, fn: (p: Preconf) => void): () => void {
    const known = this.byHash.get(hash);
    if (known !== undefined) {
      fn(known);
      return () => undefined;
    }
    let fns = this.waiting.get(hash);
    if (fns === undefined) this.waiting.set(hash, (fns = new Set()));
    fns.add(fn);
    return () => {
      if (fns.delete(fn) && fns.size === 0 && this.waiting.get(hash) === fns) this.waiting.delete(hash);
    };
  }

  /** Forgets every block outside `lo`..`hi` (older ones, and newer ones a builder that started over left). */
  private keepOnly(lo: number, hi: number): void {
    for (const [number, hashes] of this.blocks) {
      if (number >= lo && number <= hi) continue;
      for (const h of hashes) if (this.byHash.get(h)?.number === number) this.byHash.delete(h);
      this.blocks.delete(number);
    }
  }
}
