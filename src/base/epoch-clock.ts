/**
 * Epoch milliseconds from the monotonic clock: an acceptance's time from one read of
 * `performance.now()` (which the same path needs for its wait) plus an offset to the wall clock,
 * read again once a second old: not a second clock read per acceptance. A wall clock stepped
 * meanwhile shows within that second.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';

/** How old the offset may be before it is read again (ms). */
const REFRESH_MS = 1_000;

export class EpochClock {
  private offset = Date.now() - performance.now();
  private readAt = performance.now();

  /** The epoch ms (rounded) of `t`, a `performance.now()` of this thread read just now. */
  epochOf(t: number): number {
    if (t - this.readAt > REFRESH_MS) {
      this.offset = Date.now() - t;
      this.readAt = t;
    }
    return Math.round(t + this.offset);
  }
}

/** The wait from a request's arrival (`t0`) to `t`, both performance.now() on this thread: whole ms (0 without `t0`). */
export function waited(t0: number | undefined, t: number): number {
  return t0 === undefined ? 0 : Math.max(0, Math.round(t - t0));
}
