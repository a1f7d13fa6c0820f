/**
 * Token buckets per account and chain, kept per process (docs/design.md §1.3: never a global quota).
 *
 * Implemented as GCRA (the generic cell rate algorithm): a bucket of capacity `burst` refilled
 * at `perSecond` is exactly one number, its theoretical arrival time (TAT). So each request is
 * O(1) with no timer per bucket, and a bucket whose TAT has passed is full, i.e. identical to an
 * absent one: the periodic sweep drops it without changing any outcome, bounding memory.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';

/** Monotonic milliseconds. */
export type Clock = () => number;

/**
 * A bucket after a submission's token was taken: the whole tokens left (the rate-limit stage's
 * field, sent as X-RateLimit-Remaining; the limit is the grant's burst). A number: no object per request.
 */
export type Quota = number;

/** Token buckets: the per-thread RateLimiter, or the process-wide SharedRateTable. */
export interface TokenBuckets {
  /** Remaining whole tokens (≥ 0) after spending one, or the negated wait in ms (< 0). */
  take(key: string, perSecond: number, burst: number): number;
  /** Whole tokens available now, spending none. */
  peek(key: string, perSecond: number, burst: number): number;
}

/** Whole tokens left in a GCRA bucket whose theoretical arrival time is `tat` (undefined: full). */
export function tokensLeft(tat: number | undefined, now: number, perSecond: number, burst: number): number {
  const interval = 1000 / perSecond;
  const ahead = tat === undefined || tat < now ? 0 : tat - now;
  return Math.max(0, Math.floor((burst * interval - ahead) / interval + 1e-9));
}

/** A bucket's theoretical arrival time, kept in an object of its own: updated in place (a number stored in the Map is a new heap number on every submission). */
interface Bucket {
  tat: number;
}

export class RateLimiter implements TokenBuckets {
  private readonly tat = new Map<string, Bucket>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly now: Clock = () => performance.now()) {}

  /**
   * Spends one token of `key`'s bucket. Returns the remaining whole tokens (≥ 0), or, when the
   * bucket is empty, the negated wait in ms until one token is available (< 0).
   */
  take(key: string, perSecond: number, burst: number): number {
    const now = this.now();
    const interval = 1000 / perSecond;
    const window = burst * interval;
    const b = this.tat.get(key);
    const prev = b === undefined ? undefined : b.tat;
    const tat = prev === undefined || prev < now ? now : prev;
    const next = tat + interval;
    const ahead = next - now;
    if (ahead > window + 1e-6) return -(ahead - window);
    if (b === undefined) this.tat.set(key, { tat: next });
    else b.tat = next;
    return Math.floor((window - ahead) / interval + 1e-9);
  }

  peek(key: string, perSecond: number, burst: number): number {
    return tokensLeft(this.tat.get(key)?.tat, this.now(), perSecond, burst);
  }

  /** Drops full (idle) buckets; returns how many remain. */
  sweep(): number {
    const now = this.now();
    for (const [k, b] of this.tat) if (b.tat <= now) this.tat.delete(k);
    return this.tat.size;
  }

  get size(): number {
    return this.tat.size;
  }

  startSweeping(everyMs = 10_000): void {
    this.sweeper ??= setInterval(() => this.sweep(), everyMs);
    this.sweeper.unref();
  }

  close(): void {
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
  }
}

/** Retry-After in whole seconds, at least 1 (RFC 9110 §10.2.3). */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}
