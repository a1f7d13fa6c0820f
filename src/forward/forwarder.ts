/**
 * One chain's plain send, and the route every send of the chain takes (docs/design.md §5): the
 * express lane where it takes the submission (express-send.ts), else the sequencers by the chain's
 * strategy, concluded by the outcome rules (attempts.ts). A send is a flight (flight.ts): identical
 * bytes join, a hash accepted moments ago is answered at once (dedup.ts), and beyond the chain's
 * `maxInFlight` on this thread (`places`, the conditional send's too) 503 overloaded.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { ChainConfig } from '../config/config.js';
import { Exit, REJECT, result } from '../base/errors.js';
import type { CallTimes } from '../upstreams/upstream.js';
import { readPlain } from './answer.js';
import type { Attempts } from './attempts.js';
import { type AttemptObserver, type Concluded, type ForwardRequest, promised, type SendMethod, told } from './parts.js';
import type { ChainLink } from './chain-link.js';
import type { ChainDuplicates } from './dedup.js';
import type { Sequencer } from './sequencer.js';
import { ExpressSend, type ExpressLanesRef, named } from './express-send.js';
import { SEND_METHOD } from '../rpc/rpc-methods.js';
import { type Flight, Flights, Places } from './flight.js';

export interface ForwardObserver extends AttemptObserver {
  inFlight?(chainId: number, n: number): void;
}

export class ChainForwarder {
  readonly sequencers: readonly Sequencer[];
  readonly config: ChainConfig;
  /** The chain's forwards on this thread (`forward.maxInFlight`), every send's alike: the plain send's here, the conditional send's. */
  readonly places: Places;
  private readonly attempts: Attempts;
  private readonly plain: SendMethod;
  private readonly flights: Flights;
  /** The express lane's rule, on a chain that enables it; else null (the plain path only). */
  private readonly express: ExpressSend | null;

  constructor(
    /** The chain's sequencers, health and outcome rules. */
    link: ChainLink,
    /** This chain's duplicate suppression (also asked by the rate-limit stage). */
    private readonly dups: ChainDuplicates,
    observer: ForwardObserver = {},
    /** The process's express lanes, once open (none: never wrapped). */
    lanes?: ExpressLanesRef,
  ) {
    const config = link.chain;
    const { chainId } = config;
    this.config = config;
    this.attempts = link.attempts;
    this.sequencers = link.open({ calls: config.forward.connections, sockets: config.forward.wsConnections, keepWarm: config.forward.keepWarm });
    const times: CallTimes = { timeoutMs: config.forward.timeoutMs, queueMs: config.forward.queueMs };
    this.plain = {
      name: undefined,
      call: (seq, req) => seq.call(SEND_METHOD, `["${req.rawHex}"]`, times),
      read: readPlain,
      readResend: readPlain,
      knownExit: result,
    };
    this.places = new Places(
      config.forward.maxInFlight,
      observer.inFlight?.bind(observer),
      chainId,
      link.log,
      'the in-flight metrics hook failed (said once): forwards are unaffected',
    );
    this.flights = new Flights({
      table: dups.pending,
      places: this.places,
      log: link.log,
      failure: 'forward failed unexpectedly: outcome uncertain',
      ended: (f, exit) => dups.settle(f.key, exit.reason === 'ok'),
    });
    this.express =
      link.expressEndpoint === null || lanes === undefined
        ? null
        : new ExpressSend(chainId, lanes, link.expressEndpoint, this.attempts, times, link.log, observer);
  }

  /** Whether the express lane would carry `req` now: the sync send then takes the plain method and the receipt. */
  laneTakes(req: ForwardRequest): boolean {
    return this.express?.wouldTake(req) === true;
  }

  /**
   * The answer for a verified transaction: at once where no forward is needed; a forward of its
   * own is its flight (a Later, settled in the continuation that concludes it); one joined (the
   * same bytes in flight) is that forward's outcome.
   */
  forward(req: ForwardRequest): Exit | Promise<Exit> | Flight {
    const { hash } = req;
    const seen = this.dups.claim(hash);
    if (seen === 'accepted') return result(hash);
    if (seen === 'claimed') return this.send(req);
    if (seen !== 'elsewhere') return seen.join(); // the same bytes' forward, in flight on this thread
    // Another thread is forwarding these bytes: its outcome, or ours if it did not get one
    // (a forward lasts at most a timeout per sequencer, and one more to resolve the written ones).
    const deadline = performance.now() + this.config.forward.timeoutMs * (2 * this.sequencers.length + 1);
    return this.dups.awaitElsewhere(hash, deadline).then((accepted) => (accepted ? result(hash) : this.send(req)));
  }

  private send(req: ForwardRequest): Exit | Flight {
    const f = this.launch(this.flights, req.hash, req, this.plain);
    if (f instanceof Exit) this.dups.release(req.hash);
    return f;
  }

  /**
   * A send by `method` as a flight of `flights` on this chain's route, every send's alike (the
   * plain send's here, the conditional send's): 503 at once, nothing sent, where no sequencer is
   * up (upstream_unavailable) or no place is free (overloaded).
   */
  launch(flights: Flights, key: string, req: ForwardRequest, method: SendMethod): Exit | Flight {
    const f = this.sequencers.some((s) => s.eligible) ? (flights.open(key, req) ?? REJECT.overloaded) : REJECT.upstream_unavailable;
    if (!(f instanceof Exit)) this.route(req, method, f);
    return f;
  }

  /**
   * Where a send by `method` goes: through the express lane where it takes the submission (after a
   * refusal proving the bytes were not sequenced, the sequencers), else the sequencers by the
   * chain's strategy; `done` told the conclusion, naming the lane on a chain that has one.
   */
  route(req: ForwardRequest, method: SendMethod, done: Concluded): void {
    const express = this.express;
    const sub = express === null ? null : express.take(req);
    if (sub === null) this.onSequencers(req, method, express === null ? done : named(done, 'plain'));
    else {
      const lookupAt = this.sequencers.find((s) => s.eligible) ?? this.sequencers[0]!;
      told(
        express!.send(req, sub, lookupAt, () => promised((d) => this.onSequencers(req, method, d))),
        done,
      );
    }
  }

  /** The chain's sequencers by its strategy. */
  private onSequencers(req: ForwardRequest, method: SendMethod, done: Concluded): void {
    if (this.config.forward.strategy !== 'fanout') this.attempts.failover(this.sequencers, req, method, done);
    else
      this.attempts.fanout(
        this.sequencers.filter((s) => s.eligible),
        req,
        method,
        done,
      );
  }

  /** Closes its sequencer clients, waiting for calls written (the link's chain RPC is the link's to close). */
  close(): Promise<unknown> {
    return Promise.all(this.sequencers.map((s) => s.close()));
  }
}
