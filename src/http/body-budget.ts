/**
 * The process-wide budget for request bodies being read (config `limits.maxBufferedBodyBytes`):
 * a body reserves its declared size (a chunked one its cap) before its first byte is read, and
 * gives it back once read, refused or cut off. A body that does not fit is refused 503
 * `overloaded` unread, so what slow or stalled bodies hold is bounded whatever the number of
 * connections. One counter in a SharedArrayBuffer: the worker threads of a process share it.
 */
export class BodyBudget {
  private readonly used: Int32Array;

  constructor(
    /** From `BodyBudget.allocate()`, shared by every thread of the process. */
    readonly buffer: SharedArrayBuffer,
    readonly maxBytes: number,
  ) {
    this.used = new Int32Array(buffer);
  }

  static allocate(): SharedArrayBuffer {
    return new SharedArrayBuffer(4);
  }

  /** Reserves `n` bytes; false (nothing reserved) when the budget cannot hold them. */
  take(n: number): boolean {
    if (n <= 0) return true;
    if (Atomics.add(this.used, 0, n) + n <= this.maxBytes) return true;
    Atomics.sub(this.used, 0, n);
    return false;
  }

  give(n: number): void {
    if (n > 0) Atomics.sub(this.used, 0, n);
  }

  /** Bytes reserved now, by every thread. */
  get bytes(): number {
    return Atomics.load(this.used, 0);
  }
}
