/**
 * A worker thread's view of the fleet account store: the main thread runs the one listener of
 * the process (store.ts) and hands every thread the valid documents after each change; this
 * mirror parses them into the same in-memory snapshot, and reads freshness from the shared
 * state, so every thread answers alike within the same moment.
 */
import { parseAccounts, type AccountsSnapshot } from '../parse.js';
import type { Account, AccountStore } from '../types.js';
import { STORE_PROBLEMS, StoreState } from './state.js';

export class MirrorAccountStore implements AccountStore {
  private snapshot: AccountsSnapshot | null = null;
  readonly state: StoreState;

  constructor(
    state: SharedArrayBuffer,
    private readonly maxStaleMs: number,
    docs: readonly unknown[] | null,
  ) {
    this.state = new StoreState(state);
    if (docs !== null) this.update(docs);
  }

  /** The documents the main thread's store loaded (already validated there). */
  update(docs: readonly unknown[]): void {
    this.snapshot = parseAccounts({ accounts: docs });
  }

  get ready(): boolean {
    return this.snapshot !== null;
  }

  get stale(): boolean {
    return this.snapshot !== null && this.state.ageMs() > this.maxStaleMs;
  }

  get size(): number {
    return this.snapshot?.accounts.length ?? 0;
  }

  /** Why the main thread's store could not read the database last time (null once it could). */
  get problem(): string | null {
    return STORE_PROBLEMS[this.state.get(StoreState.PROBLEM)] ?? null;
  }

  byKeyHash(keySha256Hex: string): Account | undefined {
    return this.snapshot?.byHash.get(keySha256Hex);
  }

  async start(): Promise<void> {}

  close(): void {}
}
