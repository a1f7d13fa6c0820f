/**
 * A one-shot value that arrives later, without Promise machinery: callbacks run synchronously
 * when it settles. The request body is the one wait most requests have; as a Promise it costs
 * an allocation chain and a microtask hop per request, and the stages after it would run on a
 * later tick than the data that completed it. With a Later, the pipeline continues inside the
 * same uWS data callback. It never rejects (a failed read settles with a reason).
 *
 * It is a PromiseLike, so `await` works on it (tests, tools).
 */
export class Later<T> implements PromiseLike<T> {
  private settled = false;
  private value: T | undefined = undefined;
  private cb: ((v: T) => void) | null = null;

  /** Settles once; later calls are ignored. Runs the waiting callback now. */
  settle(v: T): void {
    if (this.settled) return;
    this.settled = true;
    this.value = v;
    const cb = this.cb;
    if (cb !== null) {
      this.cb = null;
      cb(v);
    }
  }

  /** Calls `f` with the value: now if settled, else when it settles. One callback only. */
  on(f: (v: T) => void): void {
    if (this.settled) f(this.value as T);
    else if (this.cb !== null) throw new Error('Later: one callback only');
    else this.cb = f;
  }

  /**
   * A Later of `f`'s result. `f` must return a value, not a promise (a Later never rejects, so
   * it cannot carry one): a thenable result throws, which the caller of `settle` answers as an
   * internal error. `await later` works (await's callbacks return nothing).
   */
  then<R1 = T, R2 = never>(f?: ((v: T) => R1 | PromiseLike<R1>) | null, _onRejected?: ((e: unknown) => R2 | PromiseLike<R2>) | null): Later<R1 | R2> {
    const next = new Later<R1 | R2>();
    this.on((v) => {
      const r = f == null ? (v as unknown as R1) : f(v);
      if (r !== null && typeof r === 'object' && typeof (r as PromiseLike<R1>).then === 'function')
        throw new TypeError('Later.then: the callback returned a promise');
      next.settle(r as R1);
    });
    return next;
  }
}
