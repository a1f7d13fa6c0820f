/**
 * The account store's state, in a SharedArrayBuffer every thread reads: when the snapshot was
 * last synced (ms since the epoch, comparable across threads), whether the store answered its
 * last call, and counters for the metrics.
 */
export class StoreState {
  static readonly LAST_SYNC = 0;
  static readonly UP = 1;
  static readonly NOTIFICATIONS = 2;
  static readonly RESYNCS = 3;
  static readonly FAILURES = 4;
  private readonly v: Float64Array;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.v = new Float64Array(buffer);
  }

  static allocate(): StoreState {
    return new StoreState(new SharedArrayBuffer(5 * 8));
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
    if (resync) this.v[StoreState.RESYNCS] = this.v[StoreState.RESYNCS]! + 1;
  }

  /** Milliseconds since the last successful sync (Infinity before the first). */
  ageMs(): number {
    const t = this.v[StoreState.LAST_SYNC]!;
    return t === 0 ? Number.POSITIVE_INFINITY : Date.now() - t;
  }
}
