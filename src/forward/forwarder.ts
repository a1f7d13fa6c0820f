/**
 * Forwarding one chain's transactions to its sequencers, with outcomes that are never
 * ambiguous (DESIGN §4, Forward):
 * - the sequencer's result must be the locally computed hash (else 502, logged loudly);
 * - "already known" for the same bytes is success; "nonce too low" is success only if that
 *   sequencer knows this very hash (eth_getTransactionByHash);
 * - any other JSON-RPC error passes through with HTTP 200 and is never retried elsewhere;
 * - a transport error, timeout, 5xx or garbage answer is a fault: failover moves on, and when
 *   no sequencer gave an answer the client gets 502 (the outcome is uncertain and logged with
 *   the hash for reconciliation) if the bytes were written to any of them, else 503 (not
 *   forwarded: safe to resend at once). Never a 200 without a sequencer acceptance.
 * Identical bytes in flight share one forward; a hash accepted moments ago is answered at once
 * (dedup.ts).
 * In-flight forwards are bounded: beyond `maxInFlight`, 503 overloaded at once; within it, a
 * forward waits at most `queueMs` for a connection to a sequencer (upstream.ts).
 * A client that disconnects does not cancel a forward already sent.
 */
import type { ChainConfig } from '../config.js';
import { reject, REJECT, result, type Exit } from '../errors.js';
import { judge, knownAfterNonceTooLow, type Outcome, type Verdict } from './answer.js';
import type { Logger } from '../log.js';
import { FastLog } from '../log-line.js';
import type { HealthBoard } from './health-board.js';
import { Sequencer, type CallTimes } from './upstream.js';
import type { ChainDuplicates } from './dedup.js';
import { SyncSender, type SyncOutcome } from '../sync/sync-send.js';

export interface ForwardEvent {
  readonly chainId: number;
  readonly sequencer: string;
  readonly outcome: Outcome;
  readonly ms: number;
}

export interface ForwardObserver {
  forward?(e: ForwardEvent): void;
  inFlight?(chainId: number, n: number): void;
  /** A sync call answered (sync-send.ts): what it came to and how long it waited (null: answered without a wait). */
  sync?(chainId: number, outcome: SyncOutcome, seconds: number | null): void;
  /** Sync calls waiting now on this chain (this thread). */
  syncWaiting?(chainId: number, n: number): void;
}

/** What one sequencer's answer came to: a plain send's outcome, or a sync send's (sync-send.ts). */
export type AttemptOutcome = Outcome | 'executed' | 'accepted_no_receipt';

export interface Attempt {
  readonly seq: Sequencer;
  readonly outcome: AttemptOutcome;
  readonly exit: Exit;
  readonly ms: number;
  readonly detail: string | undefined;
  /** For a fault: whether the request was written to the sequencer (else it never saw it). */
  readonly sent: boolean;
  /** For a fault: no connection was free in time (load). */
  readonly busy: boolean;
}

/** The faults of a forward that got no definite answer, and whether any had been written. */
export class Faults {
  readonly list: string[] = [];
  sent = false;
  /** Some sequencer had no connection free in time (load), rather than being unreachable. */
  busy = false;

  add(a: Attempt): void {
    this.list.push(`${a.seq.label}: ${a.detail ?? 'fault'}${a.sent ? '' : ' (not sent)'}`);
    if (a.sent) this.sent = true;
    else if (a.busy) this.busy = true;
  }
}

export interface ForwardRequest {
  readonly hash: string;
  readonly rawHex: string;
  readonly account: string;
  readonly reqId: string;
  /** The recovered sender, when a policy recovered it (for the audit line); else null. */
  readonly sender: string | null;
}

export class ChainForwarder {
  readonly sequencers: readonly Sequencer[];
  private inFlight = 0;
  private readonly fast: FastLog;
  private readonly times: CallTimes;
  /** eth_sendRawTransactionSync, where the chain enables it. */
  readonly sync: SyncSender | null;

  constructor(
    readonly config: ChainConfig,
    /** This chain's duplicate suppression (also asked by the rate-limit stage). */
    private readonly dups: ChainDuplicates,
    readonly log: Logger,
    /** The process-wide sequencer health, and this chain's slots in it. */
    health: { readonly board: HealthBoard; readonly slots: readonly number[] },
    private readonly observer: ForwardObserver = {},
  ) {
    this.sequencers = config.sequencers.map((u, i) => new Sequencer(u, config.forward.connections, health.board, health.slots[i]!));
    this.times = { timeoutMs: config.forward.timeoutMs, queueMs: config.forward.queueMs };
    this.fast = new FastLog(log);
    this.sync = config.sync.enabled ? new SyncSender(config, health, this, observer) : null;
  }

  get chainId(): number {
    return this.config.chainId;
  }

  /** The answer for a verified transaction; synchronous when no forward is needed. */
  forward(req: ForwardRequest): Exit | Promise<Exit> {
    const { hash } = req;
    const seen = this.dups.claim(hash);
    if (seen === 'accepted') return result(hash);
    if (seen === 'claimed') return this.send(req);
    if (seen !== 'elsewhere') return seen; // the same bytes' forward, in flight on this thread
    // Another thread is forwarding these bytes: its outcome, or ours if it did not get one.
    const deadline = performance.now() + this.config.forward.timeoutMs * (this.sequencers.length + 1);
    return this.dups.awaitElsewhere(hash, deadline).then((accepted) => (accepted ? result(hash) : this.send(req)));
  }

  private send(req: ForwardRequest): Exit | Promise<Exit> {
    const { hash } = req;
    if (!this.sequencers.some((s) => s.eligible)) {
      this.dups.release(hash);
      return REJECT.upstream_unavailable;
    }
    if (this.inFlight >= this.config.forward.maxInFlight) {
      this.dups.release(hash);
      return REJECT.overloaded;
    }

    this.inFlight++;
    this.observer.inFlight?.(this.chainId, this.inFlight);
    const params = `["${req.rawHex}"]`;
    const run =
      this.config.forward.strategy === 'fanout'
        ? this.fanout(
            this.sequencers.filter((s) => s.eligible),
            params,
            req,
          )
        : this.failover(params, req);
    const p = run.then(
      (exit) => this.settle(req, exit),
      (e: unknown) => {
        this.log.error({ err: e, tx: hash, account: req.account, reqId: req.reqId }, 'forward failed unexpectedly: outcome uncertain');
        return this.settle(req, reject('upstream_error', undefined, { txHash: hash }));
      },
    );
    this.dups.track(hash, p);
    return p;
  }

  private settle(req: ForwardRequest, exit: Exit): Exit {
    this.inFlight--;
    this.observer.inFlight?.(this.chainId, this.inFlight);
    this.dups.settle(req.hash, exit.reason === 'ok');
    return exit;
  }

  /**
   * Sequencers in order, skipping those taken out (down); move on only on a fault, never after
   * a JSON-RPC answer.
   */
  private async failover(params: string, req: ForwardRequest): Promise<Exit> {
    const faults = new Faults();
    for (const seq of this.sequencers) {
      if (!seq.eligible) continue;
      const a = await this.attempt(seq, params, req);
      this.audit(req, a, 'final');
      if (a.outcome !== 'fault') return a.exit;
      faults.add(a);
    }
    return this.noAnswer(req, faults);
  }

  /**
   * All at once; the first acceptance wins, and an acceptance beats an earlier error. Losers are
   * not cancelled; their outcomes are logged when they arrive.
   */
  private fanout(eligible: readonly Sequencer[], params: string, req: ForwardRequest): Promise<Exit> {
    return new Promise<Exit>((resolve) => {
      let left = eligible.length;
      let decided = false;
      let firstError: Attempt | null = null;
      const faults = new Faults();
      const answered = (a: Attempt) => {
        left--;
        const success = a.exit.reason === 'ok';
        const role = decided ? 'loser' : success ? 'winner' : 'pending';
        if (!decided) {
          if (success) {
            decided = true;
            resolve(a.exit);
          } else {
            if (a.outcome === 'fault') faults.add(a);
            else firstError ??= a;
            if (left === 0) {
              const exit = firstError !== null ? firstError.exit : this.noAnswer(req, faults);
              decided = true;
              resolve(exit);
            }
          }
        }
        this.audit(req, a, role); // after the decision: a throwing audit cannot leave it unmade
      };
      for (const seq of eligible) {
        this.attempt(seq, params, req)
          .then((a) => answered(a))
          .catch((e: unknown) => {
            // Unexpected (a throwing logger or observer). If nothing was decided, the outcome is
            // uncertain: 502 now, never an unanswered request nor an unhandled rejection.
            if (!decided) {
              decided = true;
              resolve(reject('upstream_error', undefined, { txHash: req.hash }));
            }
            this.log.error(
              { err: e, tx: req.hash, account: req.account, reqId: req.reqId, sequencer: seq.label },
              'fanout attempt failed unexpectedly: outcome uncertain',
            );
          });
      }
    });
  }

  /**
   * No sequencer gave a definite answer: uncertain (502) if the bytes reached any of them, else
   * definitely not forwarded (503: overloaded when a sequencer had no connection free in time,
   * unavailable when none could be reached).
   */
  noAnswer(req: ForwardRequest, faults: Faults): Exit {
    if (!faults.sent) {
      this.log.warn(
        { tx: req.hash, account: req.account, reqId: req.reqId, chainId: this.chainId, faults: faults.list },
        'no sequencer took the transaction: not forwarded',
      );
      return faults.busy ? REJECT.overloaded : REJECT.upstream_unavailable;
    }
    this.log.warn(
      { tx: req.hash, account: req.account, reqId: req.reqId, chainId: this.chainId, faults: faults.list },
      'no sequencer gave a definite answer: outcome uncertain',
    );
    return reject('upstream_error', undefined, { txHash: req.hash });
  }

  /** One sequencer, one transaction: the answer interpreted into an outcome and an Exit. */
  private async attempt(seq: Sequencer, params: string, req: ForwardRequest): Promise<Attempt> {
    const t = performance.now();
    const a = await seq.call('eth_sendRawTransaction', params, this.times);
    const done = (v: Verdict): Attempt => ({
      seq,
      outcome: v.outcome === 'nonce_too_low' ? 'rejected' : v.outcome,
      exit: v.exit,
      ms: performance.now() - t,
      detail: v.detail,
      sent: v.sent ?? true,
      busy: a.kind === 'fault' && a.busy === true,
    });
    let v = judge(a, req.hash);
    if (v.outcome === 'fault' && a.kind === 'fault' && a.why.startsWith('transport')) {
      // A refused or reset connection takes the sequencer out, on every thread, until the
      // prober sees it back; a timeout or a 5xx does not (the prober decides), so one slow
      // answer sheds no traffic.
      seq.markDown(a.why);
    } else if (v.outcome === 'hash_mismatch') {
      this.log.error(
        { tx: req.hash, account: req.account, reqId: req.reqId, sequencer: seq.label, returned: String(a.kind === 'result' ? a.result : '').slice(0, 80) },
        'SEQUENCER RETURNED A DIFFERENT HASH: not reporting acceptance',
      );
    } else if (v.outcome === 'nonce_too_low') {
      // Success only if this sequencer knows this very hash.
      const known = await seq.call('eth_getTransactionByHash', `["${req.hash}"]`, this.times);
      v = knownAfterNonceTooLow(v, known, req.hash);
    }
    return done(v);
  }

  /**
   * The audit line of one attempt (and the forward metrics of a plain send's). `method`: the
   * sync method's attempts say so (they are not in the forward metrics).
   */
  audit(req: ForwardRequest, a: Attempt, role: 'final' | 'winner' | 'loser' | 'pending', method?: string): void {
    const ms = Math.round(a.ms * 1000) / 1000;
    if (method === undefined && this.observer.forward !== undefined)
      this.observer.forward({ chainId: this.chainId, sequencer: a.seq.label, outcome: a.outcome as Outcome, ms });
    const line = this.fast.line(a.outcome === 'fault' || a.outcome === 'hash_mismatch' ? 'warn' : 'info');
    if (line === null) return;
    line.str('audit', 'forward');
    if (method !== undefined) line.str('method', method);
    line.str('reqId', req.reqId).str('account', req.account).str('tx', req.hash).json('chainId', this.chainId);
    line.json('sequencer', a.seq.labelJson).str('outcome', a.outcome).str('role', role).json('ms', ms);
    if (a.detail !== undefined) line.text('detail', a.detail);
    if (!a.sent) line.json('sent', false);
    if (req.sender !== null) line.str('sender', req.sender);
    line.end('forward');
  }

  close(): Promise<unknown> {
    return Promise.all([...this.sequencers.map((s) => s.close()), this.sync?.close()]);
  }
}

export type { Outcome };
