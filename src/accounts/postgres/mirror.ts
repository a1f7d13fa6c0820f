/**
 * A worker thread's view of the fleet account store: the main thread runs the one listener of
 * the process (store.ts), checks each changed row once and hands every thread the accounts
 * changed (already parsed: snapshot.ts); this mirror applies them to its own snapshot, and reads
 * freshness from the shared state, so every thread answers alike within the same moment.
 */
import type { Account, AccountStore } from '../types.js';
import { LiveSnapshot, type AccountChange } from './snapshot.js';
import { STORE_PROBLEMS, StoreState } from './state.js';

export class MirrorAccountStore implements AccountStore {
  private readonly snap = new LiveSnapshot();
  private loaded = false;
  readonly state: StoreState;

  constructor(
    state: SharedArrayBuffer,
    private readonly maxStaleMs: number,
    changes: readonly AccountChange[] | null,
  ) {
    this.state = new StoreState(state);
    if (changes !== null) this.update(changes);
  }

  /** Accounts the main thread's store changed (checked there); the first call makes it ready. */
  update(changes: readonly AccountChange[]): void {
    for (const c of changes) this.snap.applyWire(c);
    this.loaded = true;
  }

  get ready(): boolean {
    return this.loaded;
  }

  get stale(): boolean {
    return this.loaded && this.state.ageMs() > this.maxStaleMs;
  }

  get size(): number {
    return this.snap.size;
  }

  /** Why the main thread's store could not read the database last time (null once it could). */
  get problem(): string | null {
    return STORE_PROBLEMS[this.state.get(StoreState.PROBLEM)] ?? null;
  }

  byKeyHash(keySha256Hex: string): Account | undefined {
    return this.snap.byHash(keySha256Hex);
  }

  async start(): Promise<void> {}

  close(): void {}
}
