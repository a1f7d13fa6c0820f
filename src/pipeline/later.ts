/**
 * A one-shot value that arrives later, without Promise machinery: callbacks run synchronously
 * when it settles. The request body is the one wait most requests have; as a Promise it costs
 * an allocation chain and a microtask hop per request, and the stages after it would run on a
 * later tick than the data that completed it. With a Later, the pipeline continues inside the
 * same uWS data callback. It never rejects (a failed read settles with a reason).
 *
 * It is a PromiseLike, so `await` works on it (tests, tools).
 *
 * Whoever settles it never sees a waiter's throw: `settle` runs the waiting callback in a try,
 * and a throw goes to `stray` (a process warning: never silent, never the end of the process).
 * The pipeline's own callback catches its throws itself (pipeline.ts `resumeAfter`), so a send
 * that settles the answer it returned (src/forward/flight.ts) writes and catches nothing of the
 * answer path.
 */
/** A Later's value before it settles (no value of the caller's is this object). */
const UNSET: unknown = Object.freeze({ unset: true });

export class Later<T> implements PromiseLike<T> {
  /** The value once settled, else UNSET (one field for both: six fields a Later, two made per request). */
  private value: unknown = UNSET;
  /** The waiting callback (`on`, `onWith`; `thenWith`'s step to the next Later), or null. */
  private cb: ((v: T, a: unknown, b: unknown) => void) | null = null;
  /** The arguments passed beside the value (so a caller needs no closure per request). */
  private a: unknown = undefined;
  private b: unknown = undefined;
  /** Set by `mapWith`: the value is `pre(value, preArg)`, in place, before any callback gets it. */
  private pre: ((v: T, a: unknown) => unknown) | null = null;
  private preArg: unknown = undefined;

  /** Settles once; later calls are ignored. Runs the waiting callback now. */
  settle(v: T): void {
    if (this.value !== UNSET) return;
    const pre = this.pre;
    if (pre !== null) {
      const arg = this.preArg;
      this.pre = null;
      this.preArg = undefined;
      v = mapped(pre, v, arg) as T;
    }
    this.value = v;
    const cb = this.cb;
    if (cb === null) return;
    const a = this.a;
    const b = this.b;
    this.cb = null;
    this.a = this.b = undefined;
    try {
      cb(v, a, b);
    } catch (e) {
      stray(e);
    }
  }

  /** `on` with two arguments passed beside the value: `f` can be one function for every request. */
  onWith<A, B>(f: (v: T, a: A, b: B) => void, a: A, b: B): void {
    if (this.value !== UNSET) f(this.value as T, a, b);
    else if (this.cb !== null) throw new Error('Later: one callback only');
    else {
      this.cb = f as (v: T, a: unknown, b: unknown) => void;
      this.a = a;
      this.b = b;
    }
  }

  /** `then` with an argument passed beside the value: `f` can be one function for every request. */
  thenWith<A, R>(f: (v: T, a: A) => R, a: A): Later<R> {
    const next = new Later<R>();
    if (this.value !== UNSET) next.settle(mapped(f as (v: T, a: unknown) => R, this.value as T, a));
    // Kept as arguments rather than a closure: the step maps and passes the value on.
    else this.onWith(thenStep, next as Later<unknown>, { f: f as (v: unknown, a: unknown) => unknown, a });
    return next;
  }

  /**
   * This Later, its value mapped by `f` (with `a` beside it) before anything waiting on it gets
   * it: `thenWith` without a second Later, for the one who made it and hands it on (one map,
   * before any callback).
   */
  mapWith<A, R>(f: (v: T, a: A) => R, a: A): Later<R> {
    if (this.value !== UNSET) this.value = mapped(f as (v: T, a: unknown) => R, this.value as T, a);
    else if (this.cb !== null || this.pre !== null) throw new Error('Later: one callback only');
    else {
      this.pre = f as (v: T, a: unknown) => unknown;
      this.preArg = a;
    }
    return this as unknown as Later<R>;
  }

  /** Calls `f` with the value: now if settled, else when it settles. One callback only. */
  on(f: (v: T) => void): void {
    this.onWith(f, undefined, undefined);
  }

  /**
   * A Later of `f`'s result. `f` must return a value, not a promise (a Later never rejects, so
   * it cannot carry one): a thenable result throws, which the caller of `settle` answers as an
   * internal error. `await later` works (await's callbacks return nothing).
   */
  then<R1 = T, R2 = never>(f?: ((v: T) => R1 | PromiseLike<R1>) | null, _onRejected?: ((e: unknown) => R2 | PromiseLike<R2>) | null): Later<R1 | R2> {
    return this.thenWith((f ?? identity) as (v: T, a: undefined) => R1, undefined) as Later<R1 | R2>;
  }
}

const identity = <V>(v: V): V => v;

/** A waiting callback threw as its Later settled (a waiter other than the pipeline's, which catches its own): said, and nothing more. */
function stray(e: unknown): void {
  process.emitWarning(e instanceof Error ? e : new Error(String(e)), 'LaterCallbackError');
}

/** `thenWith`'s step: the next Later settled with the map's result. */
function thenStep(v: unknown, next: unknown, m: unknown): void {
  const { f, a } = m as { f: (v: unknown, a: unknown) => unknown; a: unknown };
  (next as Later<unknown>).settle(mapped(f, v, a));
}

function mapped<T, R>(f: (v: T, a: unknown) => R | PromiseLike<R>, v: T, a?: unknown): R {
  const r = f(v, a);
  if (r !== null && typeof r === 'object' && typeof (r as PromiseLike<R>).then === 'function')
    throw new TypeError('Later.then: the callback returned a promise');
  return r as R;
}
