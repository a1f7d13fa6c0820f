/**
 * Timeouts for many calls in flight under few timers (ws-upstream.ts): calls sharing a
 * whole-millisecond bound (the forward's) wait in a queue of their own, written in order and so
 * in deadline order, under one timer; a call with any other bound (a lookup's, a resend's) gets a
 * timer of its own. A call answered meanwhile is passed over when the queue reaches it.
 */
import { Queue } from '../queue.js';

/** Calls with one answer bound: their ids in the order written. */
interface Lane {
  readonly ms: number;
  readonly ids: Queue<number>;
  timer: NodeJS.Timeout | null;
}

export class Deadlines {
  private readonly lanes = new Map<number, Lane>();

  constructor(
    /** The deadline (performance.now()) of a call still waiting for its answer, else undefined. */
    private readonly deadlineOf: (id: number) => number | undefined,
    /** Ends a call past its bound. */
    private readonly expire: (id: number) => void,
    /** Bounds given a queue of their own. */
    private readonly maxLanes = 2,
  ) {}

  /** Call `id` expires `ms` from now: in its bound's queue (null), or by the timer returned. */
  add(id: number, ms: number): NodeJS.Timeout | null {
    let lane = this.lanes.get(ms);
    if (lane === undefined && this.lanes.size < this.maxLanes && Number.isInteger(ms))
      this.lanes.set(ms, (lane = { ms, ids: new Queue<number>(), timer: null }));
    if (lane === undefined) return setTimeout(() => this.expire(id), ms);
    lane.ids.push(id);
    if (lane.timer === null) {
      const l = lane;
      l.timer = setTimeout(() => this.sweep(l), ms);
    }
    return null;
  }

  /** Every queue's timer stopped (the client is closing). */
  close(): void {
    for (const lane of this.lanes.values()) if (lane.timer !== null) clearTimeout(lane.timer);
  }

  /** Calls answered meanwhile are passed over, those due expire; the timer is set for the next. */
  private sweep(lane: Lane): void {
    lane.timer = null;
    const now = performance.now();
    for (let id = lane.ids.peek(); id !== undefined; id = lane.ids.peek()) {
      const deadline = this.deadlineOf(id);
      if (deadline !== undefined && deadline > now) {
        lane.timer = setTimeout(() => this.sweep(lane), Math.max(1, deadline - now));
        break;
      }
      lane.ids.shift();
      if (deadline !== undefined) this.expire(id);
    }
  }
}
