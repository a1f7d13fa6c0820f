/**
 * The account store's state, in a SharedArrayBuffer every thread reads: when the snapshot was
 * last synced (ms since the epoch, comparable across threads), whether the store answered its
 * last call, and counters for the metrics.
 */
import type { StoreSync } from '../types.js';

export class StoreState implements StoreSync {
  static readonly LAST_SYNC = 0;
  static readonly UP = 1;
  static readonly NOTIFICATIONS = 2;
  static readonly RESYNCS = 3;
  static readonly FAILURES = 4;
  /** Why the last call failed (a `StoreProblem` index; 0 once a call succeeds). */
  static readonly PROBLEM = 5;
  /** Account rows fetched with their document (a diff load or a notification: only those whose version changed). */
  static readonly ROWS_FETCHED = 6;
  private readonly v: Float64Array;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.v = new Float64Array(buffer);
  }

  static allocate(): StoreState {
    return new StoreState(new SharedArrayBuffer(7 * 8));
  }

  get(i: number): number {
    return this.v[i]!;
  }

  set(i: number, value: number): void {
    this.v[i] = value;
  }

  /** Counters have one writer (the thread that runs the store): a plain add is safe. */
  add(i: number, n: number): void {
    this.v[i] = this.v[i]! + n;
  }

  synced(resync: boolean): void {
    this.v[StoreState.LAST_SYNC] = Date.now();
    this.v[StoreState.UP] = 1;
    this.v[StoreState.PROBLEM] = 0;
    if (resync) this.v[StoreState.RESYNCS] = this.v[StoreState.RESYNCS]! + 1;
  }

  get up(): boolean {
    return this.v[StoreState.UP] === 1;
  }

  get problem(): string | null {
    return STORE_PROBLEMS[this.v[StoreState.PROBLEM]!] ?? null;
  }

  get notifications(): number {
    return this.v[StoreState.NOTIFICATIONS]!;
  }

  get resyncs(): number {
    return this.v[StoreState.RESYNCS]!;
  }

  get failures(): number {
    return this.v[StoreState.FAILURES]!;
  }

  /** Milliseconds since the last successful sync (Infinity before the first). */
  ageMs(): number {
    const t = this.v[StoreState.LAST_SYNC]!;
    return t === 0 ? Number.POSITIVE_INFINITY : Date.now() - t;
  }
}

/**
 * Why the store could not be read, told apart because each has its own remedy: a database that
 * cannot be reached, and one that answers but refuses this edge (by PostgreSQL's SQLSTATE).
 */
export const STORE_PROBLEMS = [
  null,
  'the account store is unreachable',
  "permission denied: grant the edge's role SELECT on txgate_accounts (npm run accounts -- migrate --edge-role ROLE)",
  'no txgate_accounts table: run npm run accounts -- migrate',
  'authentication failed: check the user and password in accounts.url',
  'no such database: check the database name in accounts.url',
  'the database schema is older than this edge: run npm run accounts -- migrate',
] as const;

/** The STORE_PROBLEMS index of an error from the database client. */
export function problemOf(e: unknown): number {
  switch ((e as { code?: unknown }).code) {
    case '42501': // insufficient_privilege
      return 2;
    case '42P01': // undefined_table
      return 3;
    case '28P01': // invalid_password
    case '28000': // invalid_authorization_specification
      return 4;
    case '3D000': // invalid_catalog_name
      return 5;
    case '42703': // undefined_column (doc_bytes: migration 002 not applied)
      return 6;
    default:
      return 1;
  }
}
