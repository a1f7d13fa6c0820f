/**
 * The express lane's part in a forward (docs/express-lane.md), the one rule every forward of a
 * chain that enables `expressLane` goes through (forwarder.ts's route, whichever front end):
 * - `take(req)`: the wrapped submission when the account's grant has `expressLane` and the round
 *   is ours (express-lane/lane.ts), else null: the plain path, exactly as without the lane.
 * - `send`: the submission goes to the lane's endpoint instead, its answer read by the outcome
 *   rules (docs/design.md §5): `null` is no acceptance (a lookup confirms the hash within the
 *   forward's budget, else 502 uncertain); a refusal proving the bytes were not sequenced falls
 *   back to the plain path; anything else is resolved by the same lookup, never a refusal.
 * The answer names the lane that carried it (`X-Txgate-Lane`), as its audit line does (`lane`).
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import { type Exit, type Header, result } from '../base/errors.js';
import { type LaneReading, readLaneError } from '../express-lane/answer.js';
import type { Granted, LaneSubmission } from '../express-lane/lane.js';
import type { ExpressLanes } from '../express-lane/lanes.js';
import type { Logger } from '../log/log.js';
import { FastLog, millisText } from '../log/log-line.js';
import type { Answer, CallTimes, Upstream } from '../upstreams/upstream.js';
import type { PartState } from '../base/reasons.js';
import { type Rule, uncertain } from './answer.js';
import type { Attempts } from './attempts.js';
import { lookedUp } from './resolve.js';
import type { AttemptObserver, Concluded, ForwardRequest, LaneName } from './parts.js';

/** The lanes of the process, set once they are open (the composition root opens them at start). */
export interface ExpressLanesRef {
  lanes: ExpressLanes;
}

const HEADER: Record<LaneName, readonly Header[]> = {
  express: [[Buffer.from('x-txgate-lane'), Buffer.from('express')]],
  plain: [[Buffer.from('x-txgate-lane'), Buffer.from('plain')]],
};

/** `exit` with the header naming the lane that carried the submission. */
export function withLane(exit: Exit, lane: LaneName): Exit {
  return exit.withHeaders(HEADER[lane]);
}

/** `done`, told its exit with the header naming `lane`. */
export function named(done: Concluded, lane: LaneName): Concluded {
  return { concluded: (exit) => done.concluded(withLane(exit, lane)), failed: (e) => done.failed(e) };
}

/** The endpoint's answer (an upstream's Answer) in the lane's outcome terms (express-lane/answer.ts). */
export function readLaneUpstream(a: Answer): LaneReading {
  if (a.kind === 'result') return a.result === null ? { kind: 'queued' } : { kind: 'unknown', why: 'a result other than null' };
  if (a.kind === 'error') return readLaneError(a.code, a.message);
  // Never written: nothing reached the endpoint, so nothing can have been sequenced by it.
  return a.sent ? { kind: 'unknown', why: a.why } : { kind: 'not-sequenced', code: 'REQUEST_REFUSED', lostControl: false };
}

export class ExpressSend {
  private readonly fast: FastLog;

  constructor(
    private readonly chainId: number,
    private readonly box: ExpressLanesRef,
    /** The lane's endpoint (`expressLane.endpoint`), an upstream of its own. */
    readonly endpoint: Upstream,
    private readonly attempts: Attempts,
    private readonly times: CallTimes,
    private readonly log: Logger,
    private readonly observer: AttemptObserver = {},
  ) {
    this.fast = new FastLog(log);
  }

  /** The wrapped submission, or null: the plain path. */
  take(req: ForwardRequest): LaneSubmission | null {
    const granted: Granted | undefined = req.granted;
    return granted === undefined ? null : this.box.lanes.submissionFor(this.chainId, req.rawHex, granted, undefined, req.conditional?.json);
  }

  /** Whether `req` would be wrapped now (no sequence number taken): the sync send's choice of method. */
  wouldTake(req: ForwardRequest): boolean {
    const granted: Granted | undefined = req.granted;
    return granted !== undefined && this.box.lanes.wouldWrap(this.chainId, granted);
  }

  /** Sends `sub` to the endpoint, concluded by the rules above: `plain` runs the plain path; the hash is looked up at `lookupAt`, then the chain RPC. */
  async send(req: ForwardRequest, sub: LaneSubmission, lookupAt: Upstream, plain: () => Promise<Exit>): Promise<Exit> {
    const t = performance.now();
    let reading: LaneReading;
    let detail: string;
    try {
      const a = await this.endpoint.call(sub.method, sub.paramsJson, this.times);
      reading = readLaneUpstream(a);
      detail = a.kind === 'fault' ? a.why : a.kind === 'error' ? a.message.slice(0, 200) : a.result === null ? 'null' : 'a result other than null';
    } catch {
      reading = { kind: 'unknown', why: 'internal error' };
      detail = 'internal error';
    }
    sub.release(reading);
    if (reading.kind === 'not-sequenced') {
      this.audit(req, sub, 'not_sent', 'rejected', 'answer', t, `refused (${reading.code}): ${detail}; the plain path with the same bytes`);
      return withLane(await plain(), 'plain');
    }
    // `null` (queued) or no definite answer: the bytes may be in the lane; the lookup decides.
    const known = await lookedUp(this.attempts, lookupAt, req.hash, performance.now() + this.times.timeoutMs);
    if (known) {
      this.audit(req, sub, 'accepted', 'accepted', 'lookup', t, `${detail}; the hash is known`);
      this.hook(req, () => this.observer.accepted?.(this.chainId, req, this.endpoint.label, 'lookup'));
      return withLane(result(req.hash), 'express');
    }
    this.audit(req, sub, 'uncertain', 'fault', null, t, `${detail}; the lookup did not find the hash within ${this.times.timeoutMs} ms`);
    return withLane(uncertain(req.hash), 'express');
  }

  /** A hook (the forward metrics, the tracker's) that throws changes no outcome (as attempts.ts's finish). */
  private hook(req: ForwardRequest, call: () => void): void {
    try {
      call();
    } catch (e) {
      this.log.error({ err: e, tx: req.hash, reqId: req.reqId, sequencer: this.endpoint.label }, 'a forward hook failed: the outcome stands');
    }
  }

  /** The lane's audit line and forward metrics (`lane="express"`); a refusal proving the bytes were not sequenced is `not_sent`. */
  private audit(
    req: ForwardRequest,
    sub: LaneSubmission,
    outcome: PartState,
    answer: 'accepted' | 'rejected' | 'fault',
    rule: Rule | null,
    t: number,
    detail: string,
  ): void {
    const us = Math.round((performance.now() - t) * 1000);
    this.hook(req, () => this.observer.forward?.(this.chainId, this.endpoint.label, answer, us / 1000, 'express'));
    const line = this.fast.line(outcome === 'uncertain' ? 'warn' : 'info');
    if (line === null) return;
    line.str('audit', 'forward').str('lane', 'express');
    line.str('reqId', req.reqId).str('account', req.account).str('tx', req.hash).json('chainId', this.chainId);
    line.json('sequencer', this.endpoint.labelJson).str('outcome', outcome).str('answer', answer);
    if (rule !== null) line.str('rule', rule);
    line.json('ms', millisText(us));
    line.json('round', sub.round).text('detail', detail, 400);
    if (req.sender !== null) line.str('sender', req.sender);
    line.end('forward');
  }
}
