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
 * Identical bytes in flight share one forward; a hash accepted moments ago is answered at once.
 * In-flight forwards are bounded: beyond `maxInFlight`, 503 overloaded at once; within it, a
 * forward waits at most `queueMs` for a connection to a sequencer (upstream.ts).
 * A client that disconnects does not cancel a forward already sent.
 */
import type { ChainConfig } from '../config.js';
import { reject, REJECT, result, upstreamRejected, type Exit } from '../errors.js';
import type { Logger } from '../log.js';
import { FastLog, quote } from '../access-log.js';
import type { HealthBoard } from './health-board.js';
import { Sequencer, type CallTimes } from './upstream.js';
import type { SharedTxTable } from '../limits/shared-tables.js';

/** "Already known" wordings: geth/op-geth, erigon ("already known"), reth/anvil ("already imported"), nethermind ("AlreadyKnown"). */
const ALREADY_KNOWN = /already known|known transaction|already imported|alreadyknown|already in (?:the )?(?:tx ?|mem)?pool|transaction already exists/i;
const NONCE_TOO_LOW = /nonce too low|noncetoolow|nonce is too low|OldNonce/i;

/** What one sequencer made of one transaction. */
export type Outcome =
  | 'accepted'
  | 'already_known'
  | 'nonce_known'
  | 'rejected'
  | 'hash_mismatch'
  | 'fault';

export interface ForwardEvent {
  readonly chainId: number;
  readonly sequencer: string;
  readonly outcome: Outcome;
  readonly ms: number;
}

export interface ForwardObserver {
  forward?(e: ForwardEvent): void;
  inFlight?(chainId: number, n: number): void;
}

interface Attempt {
  readonly seq: Sequencer;
  readonly outcome: Outcome;
  readonly exit: Exit;
  readonly ms: number;
  readonly detail: string | undefined;
  /** For a fault: whether the request was written to the sequencer (else it never saw it). */
  readonly sent: boolean;
}

/** The faults of a forward that got no definite answer, and whether any had been written. */
class Faults {
  readonly list: string[] = [];
  sent = false;
  /** Some sequencer had no connection free in time (load), rather than being unreachable. */
  busy = false;

  add(a: Attempt): void {
    this.list.push(`${a.seq.label}: ${a.detail ?? 'fault'}${a.sent ? '' : ' (not sent)'}`);
    if (a.sent) this.sent = true;
    else if (a.detail?.startsWith('no connection') === true) this.busy = true;
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

/** Bounded set of recently accepted hashes with expiry (insertion order = expiry order). */
class RecentlyAccepted {
  private readonly expiry = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
  ) {}

  has(hash: string, now: number): boolean {
    if (this.ttlMs === 0) return false;
    const t = this.expiry.get(hash);
    if (t === undefined) return false;
    if (t > now) return true;
    this.expiry.delete(hash);
    return false;
  }

  add(hash: string, now: number): void {
    if (this.ttlMs === 0) return;
    this.expiry.delete(hash);
    this.expiry.set(hash, now + this.ttlMs);
    // Evict expired entries from the front, and the oldest beyond the bound.
    for (const [h, t] of this.expiry) {
      if (t > now && this.expiry.size <= this.max) break;
      this.expiry.delete(h);
    }
  }
}

export class ChainForwarder {
  readonly sequencers: readonly Sequencer[];
  private readonly pending = new Map<string, Promise<Exit>>();
  private readonly recent: RecentlyAccepted;
  private inFlight = 0;
  private readonly fast: FastLog;
  private readonly ttlMs: number;
  private readonly times: CallTimes;

  constructor(
    readonly config: ChainConfig,
    dedup: { readonly acceptedTtlMs: number; readonly maxEntries: number },
    private readonly log: Logger,
    /** The process-wide sequencer health, and this chain's slots in it. */
    health: { readonly board: HealthBoard; readonly slots: readonly number[] },
    private readonly observer: ForwardObserver = {},
    /** With several worker threads: in-flight and accepted hashes shared across them. */
    private readonly shared: SharedTxTable | null = null,
  ) {
    this.sequencers = config.sequencers.map((u, i) => new Sequencer(u, config.forward.connections, health.board, health.slots[i]!));
    this.times = { timeoutMs: config.forward.timeoutMs, queueMs: config.forward.queueMs };
    this.recent = new RecentlyAccepted(dedup.acceptedTtlMs, dedup.maxEntries);
    this.ttlMs = dedup.acceptedTtlMs;
    this.fast = new FastLog(log);
  }

  get chainId(): number {
    return this.config.chainId;
  }

  /** Being forwarded now, or accepted within the dedup window: a resubmission, not new work. */
  isDuplicate(hash: string): boolean {
    return this.pending.has(hash) || this.recent.has(hash, performance.now()) || (this.shared !== null && this.shared.peek(hash) !== 'none');
  }

  /** The answer for a verified transaction; synchronous when no forward is needed. */
  forward(req: ForwardRequest): Exit | Promise<Exit> {
    const { hash } = req;
    if (this.recent.has(hash, performance.now())) return result(hash);
    const shared = this.pending.get(hash);
    if (shared !== undefined) return shared;
    if (this.shared !== null) {
      const c = this.shared.claim(hash);
      if (c === 'accepted') return result(hash);
      if (c === 'in_flight') return this.awaitElsewhere(req);
    }
    return this.send(req);
  }

  /** Another thread is forwarding these bytes: wait for its acceptance, or forward if it failed. */
  private async awaitElsewhere(req: ForwardRequest): Promise<Exit> {
    const shared = this.shared!;
    const deadline = performance.now() + this.config.forward.timeoutMs * (this.sequencers.length + 1);
    for (;;) {
      const mark = shared.mark();
      const s = shared.peek(req.hash);
      if (s === 'accepted') return result(req.hash);
      const left = deadline - performance.now();
      if (s === 'none' || left <= 0) return shared.claim(req.hash) === 'accepted' ? result(req.hash) : this.send(req);
      await shared.settled(mark, left);
    }
  }

  private send(req: ForwardRequest): Exit | Promise<Exit> {
    const { hash } = req;
    if (!this.sequencers.some((s) => s.eligible)) {
      this.shared?.settle(hash, false, 0);
      return REJECT.upstream_unavailable;
    }
    if (this.inFlight >= this.config.forward.maxInFlight) {
      this.shared?.settle(hash, false, 0);
      return REJECT.overloaded;
    }

    this.inFlight++;
    this.observer.inFlight?.(this.chainId, this.inFlight);
    const params = `["${req.rawHex}"]`;
    const run = this.config.forward.strategy === 'fanout' ? this.fanout(this.sequencers.filter((s) => s.eligible), params, req) : this.failover(params, req);
    const p = run.then(
      (exit) => this.settle(req, exit),
      (e: unknown) => {
        this.log.error({ err: e, tx: hash, account: req.account, reqId: req.reqId }, 'forward failed unexpectedly: outcome uncertain');
        return this.settle(req, reject('upstream_error', undefined, { txHash: hash }));
      },
    );
    this.pending.set(hash, p);
    return p;
  }

  private settle(req: ForwardRequest, exit: Exit): Exit {
    this.inFlight--;
    this.observer.inFlight?.(this.chainId, this.inFlight);
    this.pending.delete(req.hash);
    if (exit.reason === 'ok') this.recent.add(req.hash, performance.now());
    this.shared?.settle(req.hash, exit.reason === 'ok', this.ttlMs);
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
            this.log.error({ err: e, tx: req.hash, account: req.account, reqId: req.reqId, sequencer: seq.label }, 'fanout attempt failed unexpectedly: outcome uncertain');
          });
      }
    });
  }

  /**
   * No sequencer gave a definite answer: uncertain (502) if the bytes reached any of them, else
   * definitely not forwarded (503: overloaded when a sequencer had no connection free in time,
   * unavailable when none could be reached).
   */
  private noAnswer(req: ForwardRequest, faults: Faults): Exit {
    if (!faults.sent) {
      this.log.warn({ tx: req.hash, account: req.account, reqId: req.reqId, chainId: this.chainId, faults: faults.list }, 'no sequencer took the transaction: not forwarded');
      return faults.busy ? REJECT.overloaded : REJECT.upstream_unavailable;
    }
    this.log.warn({ tx: req.hash, account: req.account, reqId: req.reqId, chainId: this.chainId, faults: faults.list }, 'no sequencer gave a definite answer: outcome uncertain');
    return reject('upstream_error', undefined, { txHash: req.hash });
  }

  /** One sequencer, one transaction: the answer interpreted into an outcome and an Exit. */
  private async attempt(seq: Sequencer, params: string, req: ForwardRequest): Promise<Attempt> {
    const t = performance.now();
    const a = await seq.call('eth_sendRawTransaction', params, this.times);
    const done = (outcome: Outcome, exit: Exit, detail?: string, sent = true): Attempt => ({ seq, outcome, exit, ms: performance.now() - t, detail, sent });
    if (a.kind === 'fault') {
      // A refused or reset connection takes the sequencer out, on every thread, until the
      // prober sees it back; a timeout or a 5xx does not (the prober decides), so one slow
      // answer sheds no traffic.
      if (a.why.startsWith('transport')) seq.markDown(a.why);
      return done('fault', a.sent ? REJECT.upstream_error : REJECT.upstream_unavailable, a.why, a.sent);
    }
    if (a.kind === 'result') {
      if (typeof a.result === 'string' && a.result.toLowerCase() === req.hash) return done('accepted', result(req.hash));
      this.log.error(
        { tx: req.hash, account: req.account, reqId: req.reqId, sequencer: seq.label, returned: String(a.result).slice(0, 80) },
        'SEQUENCER RETURNED A DIFFERENT HASH: not reporting acceptance',
      );
      return done('hash_mismatch', reject('upstream_error', 'Sequencer answered with a different transaction hash', { txHash: req.hash }), 'hash mismatch');
    }
    if (ALREADY_KNOWN.test(a.message)) return done('already_known', result(req.hash), a.message);
    if (NONCE_TOO_LOW.test(a.message)) {
      const known = await seq.call('eth_getTransactionByHash', `["${req.hash}"]`, this.times);
      if (known.kind === 'result' && isTxObject(known.result, req.hash)) return done('nonce_known', result(req.hash), a.message);
    }
    return done('rejected', upstreamRejected(a.code, a.message, a.data), a.message);
  }

  private audit(req: ForwardRequest, a: Attempt, role: 'final' | 'winner' | 'loser' | 'pending'): void {
    const ms = Math.round(a.ms * 1000) / 1000;
    if (this.observer.forward !== undefined) this.observer.forward({ chainId: this.chainId, sequencer: a.seq.label, outcome: a.outcome, ms });
    const level = a.outcome === 'fault' || a.outcome === 'hash_mismatch' ? 'warn' : 'info';
    if (!this.fast.enabled(level)) return;
    let f =
      '"audit":"forward","reqId":"' + req.reqId + '","account":"' + req.account + '","tx":"' + req.hash + '","chainId":' + this.chainId +
      ',"sequencer":' + a.seq.labelJson + ',"outcome":"' + a.outcome + '","role":"' + role + '","ms":' + ms;
    if (a.detail !== undefined) f += ',"detail":' + quote(a.detail);
    if (!a.sent) f += ',"sent":false';
    if (req.sender !== null) f += ',"sender":"' + req.sender + '"';
    this.fast.write(level, f, 'forward');
  }

  close(): Promise<unknown> {
    return Promise.all(this.sequencers.map((s) => s.close()));
  }
}

function isTxObject(v: unknown, hash: string): boolean {
  return typeof v === 'object' && v !== null && typeof (v as { hash?: unknown }).hash === 'string' && (v as { hash: string }).hash.toLowerCase() === hash;
}

