/**
 * Forwarding one chain's transactions to its sequencers, with outcomes that are never
 * ambiguous: the rules are attempts.ts's (an acceptance is a hash or a confirming lookup; a
 * written sequencer with no definite answer is asked again before anything is concluded; a
 * refusal is definite only when no written sequencer is uncertain; 502 only when a sequencer
 * that may have the bytes could not tell; 503 when nothing was sent).
 * Identical bytes in flight share one forward; a hash accepted moments ago is answered at once
 * (dedup.ts).
 * In-flight forwards are bounded: beyond `maxInFlight`, 503 overloaded at once; within it, a
 * forward waits at most `queueMs` for a connection to a sequencer (src/upstreams/).
 * A client that disconnects does not cancel a forward already sent.
 * On a chain that enables the express lane, a granted account's submission goes to the lane's
 * endpoint instead while the round is ours (express-send.ts), and every forwarded answer says
 * which lane carried it.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { ChainConfig } from '../config/config.js';
import { reject, REJECT, result, type Exit } from '../base/errors.js';
import type { CallTimes } from '../upstreams/upstream.js';
import { readPlain } from './answer.js';
import { type Attempts, concludedBy } from './attempts.js';
import type { AttemptObserver, Concluded, ForwardRequest, SendKind } from './parts.js';
import type { ChainLink } from './chain-link.js';
import type { ChainDuplicates } from './dedup.js';
import type { Sequencer } from './sequencer.js';
import { ExpressSend, type ExpressLanesRef, withLane } from './express-send.js';
import { SEND_METHOD } from '../rpc/rpc-methods.js';
import { Later } from '../pipeline/later.js';

export interface ForwardObserver extends AttemptObserver {
  inFlight?(chainId: number, n: number): void;
}

export class ChainForwarder {
  readonly sequencers: readonly Sequencer[];
  private inFlight = 0;
  private hookFailedSaid = false;
  readonly config: ChainConfig;
  private readonly attempts: Attempts;
  private readonly plain: SendKind;
  /** The express lane's rule, on a chain that enables it; else null (the plain path only). */
  private readonly express: ExpressSend | null;

  constructor(
    /** The chain's sequencers, health and outcome rules. */
    private readonly link: ChainLink,
    /** This chain's duplicate suppression (also asked by the rate-limit stage). */
    private readonly dups: ChainDuplicates,
    private readonly observer: ForwardObserver = {},
    /** The process's express lanes, once open (none: never wrapped). */
    lanes?: ExpressLanesRef,
  ) {
    const config = link.chain;
    this.config = config;
    this.attempts = link.attempts;
    this.sequencers = link.open({ calls: config.forward.connections, sockets: config.forward.wsConnections });
    const times: CallTimes = { timeoutMs: config.forward.timeoutMs, queueMs: config.forward.queueMs };
    this.plain = {
      method: undefined,
      call: (seq, req) => seq.call(SEND_METHOD, `["${req.rawHex}"]`, times),
      read: readPlain,
      readResend: readPlain,
      knownExit: result,
    };
    this.express =
      link.expressEndpoint === null || lanes === undefined
        ? null
        : new ExpressSend(config.chainId, lanes, link.expressEndpoint, this.attempts, times, link.log, observer);
  }

  get chainId(): number {
    return this.config.chainId;
  }

  /**
   * Whether the express lane would carry `req` now (its account's grant, the round ours): a
   * send that must choose its method first asks this (the sync send takes the plain method and
   * the receipt then, sync/sync-send.ts). False on a chain without the lane.
   */
  laneTakes(req: ForwardRequest): boolean {
    return this.express?.wouldTake(req) === true;
  }

  /**
   * The answer for a verified transaction; synchronous when no forward is needed. A forward of
   * its own is a Later, settled in the continuation that concludes it (the pipeline waits on it
   * with no promise or closure of its own); one joined (the same bytes in flight) is that forward's promise.
   */
  forward(req: ForwardRequest): Exit | Promise<Exit> | Later<Exit> {
    const { hash } = req;
    const seen = this.dups.claim(hash);
    if (seen === 'accepted') return result(hash);
    if (seen === 'claimed') return this.send(req);
    if (seen !== 'elsewhere') return seen; // the same bytes' forward, in flight on this thread
    // Another thread is forwarding these bytes: its outcome, or ours if it did not get one
    // (a forward lasts at most a timeout per sequencer, and one more to resolve the written ones).
    const deadline = performance.now() + this.config.forward.timeoutMs * (2 * this.sequencers.length + 1);
    return this.dups.awaitElsewhere(hash, deadline).then((accepted) => (accepted ? result(hash) : this.send(req)));
  }

  private send(req: ForwardRequest): Exit | Later<Exit> {
    const { hash } = req;
    const refused = this.enter();
    if (refused !== null) {
      this.dups.release(hash);
      return refused;
    }
    // The request's answer (a Later: the pipeline goes on inside the continuation that concludes
    // the forward), and the promise identical bytes arriving meanwhile share (dedup.ts).
    const out = new PlainAnswer(this);
    this.dups.track(hash, this.route(req, this.plain, out));
    return out;
  }

  /** A plain send concluded (PlainAnswer): its place among the in-flight given back, its outcome to the duplicates table. */
  concluded(req: ForwardRequest, exit: Exit): Exit {
    return this.settle(req, exit);
  }

  /** The answer path or the bookkeeping threw after the forward concluded (a bug): said; the outcome stands. */
  answerFailed(req: ForwardRequest, e: unknown): void {
    this.link.log.error({ err: e, tx: req.hash, reqId: req.reqId }, 'the answer path or its bookkeeping failed after the forward concluded');
  }

  /** The rules threw (a bug): the outcome is uncertain, never unanswered. */
  failed(req: ForwardRequest, e: unknown): Exit {
    this.link.log.error({ err: e, tx: req.hash, account: req.account, reqId: req.reqId }, 'forward failed unexpectedly: outcome uncertain');
    return this.settle(req, uncertainExit(req.hash));
  }

  /**
   * Where a send of `kind` goes on this chain, whichever method it is (the plain send's here, the
   * conditional send's: conditional-send.ts): through the express lane where it takes the
   * submission (its refusal proving the bytes were not sequenced: the sequencers after it), else
   * the sequencers by the chain's strategy. On a chain with the lane the answer names the lane
   * that carried it.
   */
  route(req: ForwardRequest, kind: SendKind, into?: Concluded): Promise<Exit> {
    const express = this.express;
    const sub = express === null ? null : express.take(req);
    // Without the lane, `into` concludes the forward in the sequencers' own continuation (the failover's common path: no other).
    if (express === null) return this.onSequencers(req, kind, into);
    const lane =
      sub === null
        ? this.onSequencers(req, kind).then((x) => withLane(x, 'plain'))
        : express.send(req, sub, this.sequencers.find((s) => s.eligible) ?? this.sequencers[0]!, () => this.onSequencers(req, kind));
    return into === undefined ? lane : concludedBy(lane, req, into);
  }

  /** The chain's sequencers by its strategy. */
  private onSequencers(req: ForwardRequest, kind: SendKind, into?: Concluded): Promise<Exit> {
    if (this.config.forward.strategy !== 'fanout') return this.attempts.failover(this.sequencers, req, kind, into);
    const all = this.attempts.fanout(
      this.sequencers.filter((s) => s.eligible),
      req,
      kind,
    );
    return into === undefined ? all : concludedBy(all, req, into);
  }

  private settle(req: ForwardRequest, exit: Exit): Exit {
    this.leave();
    this.dups.settle(req.hash, exit.reason === 'ok');
    return exit;
  }

  /**
   * A forward's place among the chain's `maxInFlight` on this thread, every send's alike (the
   * plain send's here, the conditional send's: conditional-send.ts): null once taken (given
   * back by `leave`), else the 503 that answers now, nothing sent.
   */
  enter(): Exit | null {
    if (!this.sequencers.some((s) => s.eligible)) return REJECT.upstream_unavailable;
    if (this.inFlight >= this.config.forward.maxInFlight) return REJECT.overloaded;
    this.inFlight++;
    this.tellInFlight();
    return null;
  }

  leave(): void {
    this.inFlight--;
    this.tellInFlight();
  }

  /**
   * The in-flight count to the metrics hook, which never breaks the bookkeeping around it: a hook
   * that threw as a place was taken or given back left the duplicates table unsettled (every
   * resend of the bytes joined the concluded forward) or the place taken for good, on the plain
   * send's path and the conditional send's alike. Its failure is said once.
   */
  private tellInFlight(): void {
    const hook = this.observer.inFlight;
    if (hook === undefined) return;
    try {
      hook(this.chainId, this.inFlight);
    } catch (e) {
      if (this.hookFailedSaid) return;
      this.hookFailedSaid = true;
      this.link.log.error({ err: e, chainId: this.chainId }, 'the in-flight metrics hook failed (said once): forwards are unaffected');
    }
  }

  /** Closes its sequencer clients, waiting for calls written (the link's chain RPC is the link's to close). */
  close(): Promise<unknown> {
    return Promise.all(this.sequencers.map((s) => s.close()));
  }
}

/** A forward whose outcome is not known (the rules or the bookkeeping threw): upstream_error with its hash. */
const uncertainExit = (hash: string): Exit => reject('upstream_error', undefined, { txHash: hash });

/**
 * A plain send's answer: the Later the pipeline waits on, concluded by the forward's own
 * continuation (attempts.ts `Concluded`): the forwarder's bookkeeping, then the answer (the
 * pipeline goes on from here), then the exit for the promise the same bytes' joiners share.
 */
class PlainAnswer extends Later<Exit> implements Concluded {
  constructor(private readonly forwarder: ChainForwarder) {
    super();
  }

  concluded(req: ForwardRequest, exit: Exit): Exit {
    try {
      this.forwarder.concluded(req, exit);
    } catch (e) {
      this.forwarder.answerFailed(req, e);
    }
    return this.answer(req, exit);
  }

  failed(req: ForwardRequest, e: unknown): Exit {
    let x: Exit;
    try {
      x = this.forwarder.failed(req, e);
    } catch (e2) {
      this.forwarder.answerFailed(req, e2);
      x = uncertainExit(req.hash);
    }
    return this.answer(req, x);
  }

  /**
   * The pipeline goes on inside `settle` (its answer path). A throw there, or in the forwarder's
   * bookkeeping before it (a metrics hook, the duplicates table), is said, and the request is
   * answered all the same, and the exit still given to the joiners' promise, which never rejects
   * (nothing would handle it): every request one answer, the process never ended by it.
   */
  private answer(req: ForwardRequest, x: Exit): Exit {
    try {
      this.settle(x);
    } catch (e) {
      this.forwarder.answerFailed(req, e);
    }
    return x;
  }
}
