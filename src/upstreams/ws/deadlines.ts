/**
 * Timeouts for many calls in flight under few timers (ws-upstream.ts): calls sharing a
 * whole-millisecond bound (the forward's) wait in a queue of their own, written in order and so
 * in deadline order, under one timer; a call with any other bound (a lookup's, a resend's) gets a
 * timer of its own. A call answered meanwhile is passed over when the queue reaches it.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import { Queue } from '../queue.js';

/** Calls with one answer bound: their ids in the order written. */
interface Cohort {
  readonly ms: number;
  readonly ids: Queue<number>;
  timer: NodeJS.Timeout | null;
}

export class Deadlines {
  private readonly cohorts = new Map<number, Cohort>();

  constructor(
    /** The deadline (performance.now()) of a call still waiting for its answer, else undefined. */
    private readonly deadlineOf: (id: number) => number | undefined,
    /** Ends a call past its bound. */
    private readonly expire: (id: number) => void,
    /** Bounds given a queue of their own. */
    private readonly maxCohorts = 2,
  ) {}

  /** Call `id` expires `ms` from now: in its bound's queue (null), or by the timer returned. */
  add(id: number, ms: number): NodeJS.Timeout | null {
    let cohort = this.cohorts.get(ms);
    if (cohort === undefined && this.cohorts.size < this.maxCohorts && Number.isInteger(ms))
      this.cohorts.set(ms, (cohort = { ms, ids: new Queue<number>(), timer: null }));
    if (cohort === undefined) return setTimeout(() => this.expire(id), ms);
    cohort.ids.push(id);
    if (cohort.timer === null) {
      const l = cohort;
      l.timer = setTimeout(() => this.sweep(l), ms);
    }
    return null;
  }

  /** Every queue's timer stopped (the client is closing). */
  close(): void {
    for (const cohort of this.cohorts.values()) if (cohort.timer !== null) clearTimeout(cohort.timer);
  }

  /** Calls answered meanwhile are passed over, those due expire; the timer is set for the next. */
  private sweep(cohort: Cohort): void {
    cohort.timer = null;
    const now = performance.now();
    for (let id = cohort.ids.peek(); id !== undefined; id = cohort.ids.peek()) {
      const deadline = this.deadlineOf(id);
      if (deadline !== undefined && deadline > now) {
        cohort.timer = setTimeout(() => this.sweep(cohort), Math.max(1, deadline - now));
        break;
      }
      cohort.ids.shift();
      if (deadline !== undefined) this.expire(id);
    }
  }
}
