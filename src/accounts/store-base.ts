/**
 * What every account store answers alike, written once (the file store, the fleet store and its
 * worker-thread mirrors extend it): the lookup against the snapshot in force, readiness, size,
 * staleness and the last problem.
 */
import type { Account, StoreSync } from './types.js';

/** A snapshot a store holds: the account of a key hash, and how many accounts. */
export interface Lookup {
  byHash(keySha256Hex: string): Account | undefined;
  readonly size: number;
}

/**
 * The accessors every store answers alike, written once: the lookup against the snapshot in
 * force, readiness, size, staleness (a synced store's age past its bound) and the last problem.
 */
export abstract class StoreBase {
  /** True once a first snapshot is in force. */
  protected loaded = false;
  /** The snapshot in force. */
  protected abstract readonly snap: Lookup;
  /** A store synced from a remote source: its state and the age past which it is stale (null: never stale). */
  protected abstract readonly freshness: { readonly state: StoreSync; readonly maxStaleMs: number } | null;

  byKeyHash(keySha256Hex: string): Account | undefined {
    return this.snap.byHash(keySha256Hex);
  }

  get ready(): boolean {
    return this.loaded;
  }

  get size(): number {
    return this.snap.size;
  }

  get stale(): boolean {
    const f = this.freshness;
    return this.loaded && f !== null && f.state.ageMs() > f.maxStaleMs;
  }

  get problem(): string | null {
    return this.freshness?.state.problem ?? null;
  }
}
