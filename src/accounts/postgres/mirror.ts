/**
 * A worker thread's view of the fleet account store: the main thread runs the one listener of
 * the process (store.ts, connection.ts), checks each changed row once and hands every thread the accounts
 * changed (already parsed: snapshot.ts); this mirror applies them to its own snapshot, and reads
 * freshness from the shared state, so every thread answers alike within the same moment.
 */
import { StoreBase } from '../store-base.js';
import type { MirrorStore } from '../types.js';
import { LiveSnapshot, type AccountChange } from './snapshot.js';
import { StoreState } from './state.js';

/** What a mirror starts from: the store's shared state, and the accounts in force (null before the first load). */
export interface MirrorSeed {
  readonly state: SharedArrayBuffer;
  readonly changes: readonly AccountChange[] | null;
}

export class MirrorAccountStore extends StoreBase implements MirrorStore {
  protected readonly snap = new LiveSnapshot();
  readonly state: StoreState;
  protected readonly freshness: { readonly state: StoreState; readonly maxStaleMs: number };

  constructor(state: SharedArrayBuffer, maxStaleMs: number, changes: readonly AccountChange[] | null) {
    super();
    this.state = new StoreState(state);
    this.freshness = { state: this.state, maxStaleMs };
    if (changes !== null) this.update(changes);
  }

  /** Accounts the main thread's store changed (checked there); the first call makes it ready. */
  update(changes: readonly AccountChange[]): void {
    for (const c of changes) this.snap.applyWire(c);
    this.loaded = true;
  }

  async start(): Promise<void> {}

  close(): void {}
}
