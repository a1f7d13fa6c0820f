/**
 * Process-wide state shared by the worker threads through SharedArrayBuffers, so that rate
 * limits and duplicate suppression stay per process (docs/design.md §1.3: buckets per edge process), not
 * per thread.
 *
 * Both are open-addressed tables keyed by a 64-bit fingerprint, under one spin lock per table
 * (Atomics.compareExchange; the critical sections are a short probe and a few stores). Slots
 * are reused once their content has expired, so memory is fixed at start-up.
 * Time is absolute (performance.timeOrigin + performance.now()), comparable across threads.
 */

// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import { tokensLeft } from './rate-limiter.js';

export const now = (): number => performance.timeOrigin + performance.now();

/** FNV-1a, 64 bits as two 32-bit halves (never 0,0: 0 marks an empty slot). */
export function fingerprint(s: string): [number, number] {
  let h1 = 0x811c9dc5;
  let h2 = 0xcbf29ce4;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x01000193) ^ (h1 >>> 7);
  }
  if (h1 === 0 && h2 === 0) h1 = 1;
  return [h1 | 0, h2 | 0];
}

export interface SharedTableBuffers {
  readonly keys: SharedArrayBuffer; // Int32 × 2 per slot
  readonly lock: SharedArrayBuffer; // two Int32: the table's lock, and a count of settles (waiters wait on it)
  readonly values: SharedArrayBuffer; // Float64 per slot
  readonly states: SharedArrayBuffer; // Int32 per slot (table-specific)
  readonly size: number;
}

export function allocateTable(size: number): SharedTableBuffers {
  return {
    keys: new SharedArrayBuffer(size * 8),
    lock: new SharedArrayBuffer(8),
    values: new SharedArrayBuffer(size * 8),
    states: new SharedArrayBuffer(size * 4),
    size,
  };
}

class Table {
  protected readonly keys: Int32Array;
  /** [0]: the lock; [1]: bumped and notified on every settle (SharedTxTable). */
  protected readonly lockWord: Int32Array;
  protected readonly values: Float64Array;
  protected readonly states: Int32Array;
  protected readonly size: number;

  constructor(b: SharedTableBuffers) {
    this.keys = new Int32Array(b.keys);
    this.lockWord = new Int32Array(b.lock);
    this.values = new Float64Array(b.values);
    this.states = new Int32Array(b.states);
    this.size = b.size;
  }

  /** One lock for the table: critical sections are a short probe and a few stores. */
  protected lock(): void {
    while (Atomics.compareExchange(this.lockWord, 0, 0, 1) !== 0) {
      /* spin */
    }
  }

  protected unlock(): void {
    Atomics.store(this.lockWord, 0, 0);
  }

  /**
   * Under the lock: the slot of a key, claiming an empty one or one whose content expired
   * (`free`) if the key is absent. -1 when the probe window is full.
   */
  protected slot(key: string, free: (i: number) => boolean, insert = true): number {
    const [a, b] = fingerprint(key);
    const start = (a >>> 0) % this.size;
    let reusable = -1;
    const probes = Math.min(this.size, 64);
    for (let n = 0; n < probes; n++) {
      const i = (start + n) % this.size;
      const ka = this.keys[2 * i]!;
      const kb = this.keys[2 * i + 1]!;
      if (ka === a && kb === b) return i;
      if (ka === 0 && kb === 0) {
        if (reusable < 0) reusable = i;
        break; // the key is not further along
      }
      if (reusable < 0 && free(i)) reusable = i;
    }
    if (reusable < 0 || !insert) return -1;
    this.keys[2 * reusable] = a;
    this.keys[2 * reusable + 1] = b;
    this.states[reusable] = 0;
    this.values[reusable] = 0;
    return reusable;
  }
}

/**
 * GCRA token buckets (see rate-limiter.ts) in shared memory: the value of a slot is its
 * theoretical arrival time (absolute ms). A slot whose TAT has passed is a full bucket and may
 * be taken over by another key.
 */
export class SharedRateTable extends Table {
  peek(key: string, perSecond: number, burst: number): number {
    const t = now();
    this.lock();
    const i = this.slot(key, () => false, false);
    const tat = i < 0 ? undefined : this.values[i]!;
    this.unlock();
    return tokensLeft(tat, t, perSecond, burst);
  }

  take(key: string, perSecond: number, burst: number): number {
    const t = now();
    const interval = 1000 / perSecond;
    const window = burst * interval;
    this.lock();
    const i = this.slot(key, (j) => this.values[j]! <= t);
    if (i < 0) {
      this.unlock();
      return 0; // no free slot in the probe window: fail open for this request
    }
    const prev = this.values[i]!;
    const tat = Math.max(prev, t);
    const next = tat + interval;
    const ahead = next - t;
    if (ahead > window + 1e-6) {
      this.unlock();
      return -(ahead - window);
    }
    this.values[i] = next;
    this.unlock();
    return Math.floor((window - ahead) / interval + 1e-9);
  }
}

const EMPTY = 0;
const IN_FLIGHT = 1;
const ACCEPTED = 2;

/**
 * Transaction hashes across threads: being forwarded now (by some thread), or accepted until
 * an expiry time. A thread that sees a hash in flight elsewhere waits for that outcome
 * (Atomics.waitAsync on the settle count: woken by the settling thread, no polling).
 */
export class SharedTxTable extends Table {
  /** 'accepted' (answer at once), 'in_flight' (another forward is running), or 'claimed' (you forward). */
  claim(hash: string): 'accepted' | 'in_flight' | 'claimed' | 'full' {
    const t = now();
    this.lock();
    const i = this.slot(hash, (j) => this.states[j] === EMPTY || this.values[j]! <= t);
    if (i < 0) {
      this.unlock();
      return 'full';
    }
    const s = this.states[i]!;
    let r: 'accepted' | 'in_flight' | 'claimed';
    if (s === ACCEPTED && this.values[i]! > t) r = 'accepted';
    else if (s === IN_FLIGHT && this.values[i]! > t) r = 'in_flight';
    else {
      this.states[i] = IN_FLIGHT;
      this.values[i] = t + 60_000; // a stale claim (a thread died mid-forward) expires
      r = 'claimed';
    }
    this.unlock();
    return r;
  }

  /** Ends a claim: accepted until `ttlMs` from now, or released; wakes the threads waiting. */
  settle(hash: string, accepted: boolean, ttlMs: number): void {
    this.lock();
    const i = this.slot(hash, () => false, false);
    if (i >= 0) {
      if (accepted && ttlMs > 0) {
        this.states[i] = ACCEPTED;
        this.values[i] = now() + ttlMs;
      } else {
        this.states[i] = EMPTY;
        this.values[i] = 0;
      }
    }
    this.unlock();
    if (i >= 0) {
      Atomics.add(this.lockWord, 1, 1);
      Atomics.notify(this.lockWord, 1);
    }
  }

  /** The settle count now: read it before `peek`, then `settled(mark, …)` cannot miss a settle. */
  mark(): number {
    return Atomics.load(this.lockWord, 1);
  }

  /**
   * Resolves when some hash was settled since `mark` (by any thread), or after `timeoutMs`:
   * a notification, not polling. The caller peeks again to see whether it was its hash.
   */
  settled(mark: number, timeoutMs: number): Promise<unknown> {
    const w = (
      Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, t: number): { async: boolean; value: Promise<unknown> | string } }
    ).waitAsync(this.lockWord, 1, mark, timeoutMs);
    return w.async ? (w.value as Promise<unknown>) : Promise.resolve(w.value);
  }

  /** The state of a hash now, without claiming it. */
  peek(hash: string): 'accepted' | 'in_flight' | 'none' {
    const t = now();
    this.lock();
    const i = this.slot(hash, () => false, false);
    if (i < 0) {
      this.unlock();
      return 'none';
    }
    const s = this.states[i]!;
    const v = this.values[i]!;
    this.unlock();
    return s === ACCEPTED && v > t ? 'accepted' : s === IN_FLIGHT && v > t ? 'in_flight' : 'none';
  }
}

/**
 * Counts per key under a cap (open WebSocket connections per account), so that a cap is per
 * process whichever thread a connection landed on. `acquire` checks and counts in one step.
 */
export interface ConnectionCounts {
  /** Counts one more for `key` unless it is at `max`: 'counted', 'full', or 'untracked' (no room to count: let in, uncounted). */
  acquire(key: string, max: number): 'counted' | 'full' | 'untracked';
  /** One fewer for a key `acquire` counted. */
  release(key: string): void;
}

/** The counts of one thread (a single-threaded service). */
export class LocalCounts implements ConnectionCounts {
  private readonly counts = new Map<string, number>();

  acquire(key: string, max: number): 'counted' | 'full' {
    const n = this.counts.get(key) ?? 0;
    if (n >= max) return 'full';
    this.counts.set(key, n + 1);
    return 'counted';
  }

  release(key: string): void {
    const n = (this.counts.get(key) ?? 1) - 1;
    if (n <= 0) this.counts.delete(key);
    else this.counts.set(key, n);
  }
}

/**
 * The counts in shared memory, for every worker thread: a slot's state is its count, and a slot
 * at 0 may be taken over by another key. A full probe window lets the connection in uncounted
 * (as the rate table fails open), rather than refusing a client for a table of ours.
 */
export class SharedCounts extends Table implements ConnectionCounts {
  acquire(key: string, max: number): 'counted' | 'full' | 'untracked' {
    this.lock();
    const i = this.slot(key, (j) => this.states[j] === 0);
    let out: 'counted' | 'full' | 'untracked' = 'untracked';
    if (i >= 0) {
      out = this.states[i]! >= max ? 'full' : 'counted';
      if (out === 'counted') this.states[i]!++;
    }
    this.unlock();
    return out;
  }

  release(key: string): void {
    this.lock();
    const i = this.slot(key, () => false, false);
    if (i >= 0 && this.states[i]! > 0) this.states[i]!--;
    this.unlock();
  }
}
