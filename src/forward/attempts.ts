/**
 * The outcome rules of a forward, written once for every kind of send (the plain
 * eth_sendRawTransaction, the sync method) and every strategy (failover, fanout), whichever
 * front end the request came through (docs/design.md §5):
 *
 * 1. An acceptance is a hash, never a wording: a result equal to the locally computed hash (or,
 *    for the sync method, a receipt of it), or eth_getTransactionByHash returning this very
 *    transaction from that sequencer (or from the chain's RPC where one is configured).
 * 2. A written attempt with no definite answer (a fault after the bytes were handed to the
 *    socket, another hash, a wording the lookup cannot confirm) is resolved before anything is
 *    concluded: the same bytes are resent to the same sequencer on a fresh connection (safe by
 *    construction), and the hash looked up there, until it tells or the forward's time budget
 *    (`forward.timeoutMs` from the fault) runs out. Only then is it unresolved.
 * 3. A refusal is definite only when no written sequencer is unresolved: accepted if any
 *    sequencer accepted; else 502 uncertain (with `data.txHash`) if any is unresolved; else the
 *    first refusal; else nothing was sent (503 overloaded or unavailable).
 *
 * Each sequencer's part is one audit line naming the rule that established it (`hash`,
 * `lookup`, `resend`, `answer`: its own refusal, `unresolved`, `not_sent`).
 */
import type { Exit } from '../errors.js';
import type { Logger } from '../log.js';
import { FastLog } from '../log-line.js';
import { notSent, readLookup, uncertain, type Known, type Outcome, type Reading, type Rule } from './answer.js';
import type { Answer, CallTimes, Upstream as Sequencer } from './upstream.js';

export interface ForwardRequest {
  readonly hash: string;
  readonly rawHex: string;
  readonly account: string;
  readonly reqId: string;
  /** The recovered sender, when a policy recovered it (for the audit line); else null. */
  readonly sender: string | null;
}

/** A kind of send: its call, what its answers say, and its acceptance when a lookup or a resend establishes it. */
export interface SendKind {
  /** The method named in the audit line (undefined: the plain send, which is also in the forward metrics). */
  readonly method: string | undefined;
  call(seq: Sequencer, req: ForwardRequest): Promise<Answer>;
  read(a: Answer, hash: string): Reading;
  /** What an answer to a resend of the same bytes (the plain method) says. */
  readResend(a: Answer, hash: string): Reading;
  /** The answer when the transaction is known to be accepted without this call's own result (a lookup, a resend). */
  knownExit(hash: string): Exit;
}

/** What one sequencer's part in a forward came to. */
export interface Attempt {
  readonly seq: Sequencer;
  readonly state: 'accepted' | 'refused' | 'unresolved' | 'not_sent';
  /** For the audit line and the forward metrics. */
  readonly outcome: Outcome;
  readonly rule: Rule;
  /** The answer this part gives, for accepted and refused. */
  readonly exit: Exit | null;
  readonly ms: number;
  readonly detail: string | undefined;
  /** not_sent: no connection was free in time (load), rather than the sequencer unreachable. */
  readonly busy: boolean;
  /** The last fault was a transport error (refused, reset): the sequencer may be down. */
  readonly transport: boolean;
}

export interface ForwardEvent {
  readonly chainId: number;
  readonly sequencer: string;
  readonly outcome: Outcome;
  readonly ms: number;
}

export interface AttemptObserver {
  forward?(e: ForwardEvent): void;
}

export type Role = 'final' | 'winner' | 'loser' | 'pending';

const MIN_PAUSE_MS = 10;
const MAX_PAUSE_MS = 200;
const FAULT = 'a fault';
const MISMATCH = 'another hash';

/** The rules above for one chain's sequencers, shared by its plain send and its sync send. */
export class Attempts {
  private readonly fast: FastLog;

  constructor(
    private readonly chainId: number,
    private readonly times: CallTimes,
    /** The chain's own RPC (`chains[].rpc`), asked too where a sequencer does not confirm a hash; else null. */
    private readonly rpc: Sequencer | null,
    readonly log: Logger,
    private readonly observer: AttemptObserver = {},
  ) {
    this.fast = new FastLog(log);
  }

  /** Sequencers in order, moving on only when one did not definitely answer; written ones are resolved meanwhile. */
  async failover(seqs: readonly Sequencer[], req: ForwardRequest, kind: SendKind): Promise<Exit> {
    // Made only off the common path (the first sequencer answers with the hash).
    let parts: Attempt[] | null = null;
    let resolving: Promise<Attempt>[] | null = null;
    // Set once another sequencer accepted: the written ones need no resolving any more.
    let others: { accepted: boolean } | null = null;
    for (const seq of seqs) {
      if (!seq.eligible) continue;
      const a = await this.attempt(seq, req, kind);
      if (a.state === 'unresolved') {
        const o = (others ??= { accepted: false });
        (resolving ??= []).push(this.resolve(seq, req, kind, a, o).then((r) => (this.finish(req, r, o.accepted ? 'loser' : 'final', kind), r)));
        continue;
      }
      this.finish(req, a, 'final', kind);
      if (a.state === 'accepted') {
        if (others !== null) others.accepted = true;
        return a.exit!;
      }
      (parts ??= []).push(a);
      if (a.state === 'refused') break;
    }
    if (resolving !== null) for (const a of await Promise.all(resolving)) (parts ??= []).push(a);
    return this.decide(req, parts ?? []);
  }

  /** All at once: the first acceptance answers; otherwise the decision waits for every part, resolved. */
  fanout(seqs: readonly Sequencer[], req: ForwardRequest, kind: SendKind): Promise<Exit> {
    return new Promise<Exit>((answer) => {
      const parts: Attempt[] = [];
      let decided = false;
      // Set once a sequencer accepted: the others' resolving stops.
      const others = { accepted: false };
      const decide = (exit: Exit) => {
        if (decided) return;
        decided = true;
        answer(exit);
      };
      const settled = (a: Attempt) => {
        const role: Role = decided ? 'loser' : a.state === 'accepted' ? 'winner' : 'pending';
        parts.push(a);
        if (a.state === 'accepted') {
          others.accepted = true;
          decide(a.exit!);
        } else if (parts.length === seqs.length) decide(this.decide(req, parts));
        return role;
      };
      for (const seq of seqs) {
        this.attempt(seq, req, kind)
          .then((a) => (a.state === 'unresolved' ? this.resolve(seq, req, kind, a, others) : a))
          .then((a) => this.finish(req, a, settled(a), kind))
          .catch((e: unknown) => {
            // Unexpected (a throwing logger or observer): the part is unresolved, never unanswered.
            this.log.error({ err: e, tx: req.hash, reqId: req.reqId, sequencer: seq.label }, 'fanout attempt failed unexpectedly: outcome uncertain');
            if (!parts.some((p) => p.seq === seq)) settled(this.part(seq, 'unresolved', 'fault', 'unresolved', null, performance.now(), 'internal error'));
          });
      }
    });
  }

  /**
   * The decision over every part (rule 3). Logged where no sequencer accepted nor refused, with
   * each sequencer's part, for reconciliation.
   */
  decide(req: ForwardRequest, parts: readonly Attempt[]): Exit {
    let refused: Attempt | null = null;
    let unresolved = false;
    let busy = false;
    for (const p of parts) {
      if (p.state === 'accepted') return p.exit!;
      if (p.state === 'unresolved') unresolved = true;
      else if (p.state === 'refused') refused ??= p;
      else if (p.busy) busy = true;
    }
    if (unresolved) {
      this.log.warn(
        { tx: req.hash, account: req.account, reqId: req.reqId, chainId: this.chainId, rule: 'unresolved', parts: describe(parts) },
        refused !== null
          ? 'a sequencer refused while another that was written could not tell: outcome uncertain'
          : 'no sequencer gave a definite answer: outcome uncertain',
      );
      return uncertain(req.hash);
    }
    if (refused !== null) return refused.exit!;
    this.log.warn(
      { tx: req.hash, account: req.account, reqId: req.reqId, chainId: this.chainId, rule: 'not_sent', parts: describe(parts) },
      'no sequencer took the transaction: not forwarded',
    );
    return notSent(busy);
  }

  /** One call to one sequencer, and the lookup its answer asks for; an unresolved part is resolved by the caller. */
  async attempt(seq: Sequencer, req: ForwardRequest, kind: SendKind): Promise<Attempt> {
    const t = performance.now();
    let r = kind.read(await kind.call(seq, req), req.hash);
    // A connection lost before the bytes went (reset at connect, a kept-alive one closed by the
    // sequencer): nothing was sent, so once more at once, on a fresh connection.
    if (r.t === 'not_sent' && r.transport && !r.busy) r = kind.read(await kind.call(seq, req), req.hash);
    // The common path: the hash, at once.
    if (r.t === 'accepted') return this.part(seq, 'accepted', r.outcome, 'hash', r.exit, t, r.detail);
    if (r.t === 'unresolved' && r.outcome === 'hash_mismatch')
      this.log.error(
        { tx: req.hash, account: req.account, reqId: req.reqId, sequencer: seq.label, detail: r.detail },
        'SEQUENCER RETURNED A DIFFERENT HASH: not reporting acceptance',
      );
    return this.conclude(seq, req, r, t);
  }

  /** A reading other than an acceptance by hash, with the lookup a suggestive answer asks for. */
  private async conclude(seq: Sequencer, req: ForwardRequest, r: Reading, t: number): Promise<Attempt> {
    switch (r.t) {
      case 'accepted':
        return this.part(seq, 'accepted', r.outcome, 'hash', r.exit, t, r.detail);
      case 'refused':
        return this.part(seq, 'refused', 'rejected', 'answer', r.exit, t, r.detail);
      case 'not_sent':
        return { ...this.part(seq, 'not_sent', 'fault', 'not_sent', null, t, `${r.detail} (not sent)`), busy: r.busy, transport: r.transport };
      case 'unresolved':
        return { ...this.part(seq, 'unresolved', r.outcome, 'unresolved', null, t, r.detail), transport: r.transport === true };
      case 'check': {
        const known = await this.lookup(seq, req.hash, performance.now() + this.times.timeoutMs);
        if (known === 'known') return this.part(seq, 'accepted', r.confirmed.outcome, 'lookup', r.confirmed.exit, t, `${r.detail}; the hash is known`);
        if (known === 'unknown' && r.unconfirmed !== null)
          return this.part(seq, 'refused', 'rejected', 'answer', r.unconfirmed, t, `${r.detail}; the hash is unknown`);
        return this.part(
          seq,
          'unresolved',
          'fault',
          'unresolved',
          null,
          t,
          `${r.detail}; the lookup ${known === 'unknown' ? 'does not know the hash' : known === 'no_lookup' ? 'is not served' : 'failed'}`,
        );
      }
    }
  }

  /**
   * Rule 2: asks the sequencer again, the hash and then the same bytes, in turn, until it tells
   * or the budget (one forward timeout from now) runs out. A lookup that returns the
   * transaction is an acceptance; so is a resend answered with the hash, and one refused in
   * words that do not suggest the bytes are there is its own refusal. Anything else is asked
   * again while the sequencer faults; an answer that will not change by asking again (another
   * hash, an endpoint that serves no lookup) leaves the part unresolved, as does the budget's end.
   * A suggestive refusal ("already known", "nonce too low") with a lookup answering null is
   * never a refusal here: the sequencer may still be taking the bytes first written.
   */
  async resolve(seq: Sequencer, req: ForwardRequest, kind: SendKind, first: Attempt, others: { readonly accepted: boolean }): Promise<Attempt> {
    const t = performance.now() - first.ms;
    const deadline = performance.now() + this.times.timeoutMs;
    // A resend leaves this much of the budget to the lookup after it.
    const reserve = this.times.timeoutMs / 4;
    const params = `["${req.rawHex}"]`;
    let pause = MIN_PAUSE_MS;
    let tries = 0;
    let said = 'could not tell';
    let transport = first.transport;
    let ask: 'lookup' | 'resend' = 'lookup';
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0 || others.accepted) break;
      if (ask === 'lookup') {
        // The hash first: a sequencer that took the bytes says so without another write.
        const known = await this.lookup(seq, req.hash, deadline);
        if (known === 'known')
          return this.part(
            seq,
            'accepted',
            'accepted',
            'lookup',
            kind.knownExit(req.hash),
            t,
            `${first.detail ?? 'no answer'}; resent ${tries}x; the hash is known`,
          );
        // An answer that will not change by asking again (another hash; no lookup served after a refusal in suggestive words).
        if (tries > 0 && (said === MISMATCH || (known === 'no_lookup' && said !== FAULT))) break;
        ask = 'resend';
        continue;
      }
      tries++;
      const bound = Math.max(1, left > 2 * reserve ? left - reserve : left);
      const r = kind.readResend(
        await seq.call('eth_sendRawTransaction', params, { timeoutMs: bound, queueMs: Math.max(1, Math.min(bound, this.times.queueMs)) }),
        req.hash,
      );
      const again = `${first.detail ?? 'no answer'}; resent ${tries}x`;
      if (r.t === 'accepted') return this.part(seq, 'accepted', 'accepted', 'resend', kind.knownExit(req.hash), t, `${again}: the hash`);
      if (r.t === 'refused') return this.part(seq, 'refused', 'rejected', 'resend', r.exit, t, `${again}: refused: ${r.detail}`);
      transport = (r.t === 'unresolved' || r.t === 'not_sent') && r.transport === true;
      said = r.t === 'unresolved' && r.outcome === 'hash_mismatch' ? MISMATCH : r.t === 'check' ? r.detail : FAULT;
      await sleep(Math.min(pause, deadline - performance.now()));
      pause = Math.min(pause * 2, MAX_PAUSE_MS);
      ask = 'lookup';
    }
    return {
      ...first,
      state: 'unresolved',
      rule: 'unresolved',
      ms: performance.now() - t,
      transport,
      detail: `${first.detail ?? 'no answer'}; resent ${tries}x, could not tell (last: ${said})`,
    };
  }

  /**
   * eth_getTransactionByHash on the sequencer, and on the chain's RPC where the sequencer does
   * not know it: `known` if either returns this very transaction.
   */
  async lookup(seq: Sequencer, hash: string, deadline: number): Promise<Known> {
    const params = `["${hash}"]`;
    const left = () => Math.max(1, Math.min(deadline - performance.now(), this.times.timeoutMs));
    const k = readLookup(await seq.call('eth_getTransactionByHash', params, { timeoutMs: left(), queueMs: Math.min(left(), this.times.queueMs) }), hash);
    if (k === 'known' || this.rpc === null) return k;
    const r = readLookup(await this.rpc.call('eth_getTransactionByHash', params, { timeoutMs: left(), queueMs: Math.min(left(), this.times.queueMs) }), hash);
    return r === 'known' ? 'known' : k;
  }

  /** A part's audit line and metrics; a transport fault left standing takes the sequencer out until a probe sees it back. */
  finish(req: ForwardRequest, a: Attempt, role: Role, kind: SendKind): Role {
    if (a.transport && (a.state === 'unresolved' || a.state === 'not_sent')) a.seq.markDown(a.detail ?? 'transport');
    this.audit(req, a, role, kind.method);
    return role;
  }

  /** The audit line of one sequencer's part (and the forward metrics of a plain send's). */
  audit(req: ForwardRequest, a: Attempt, role: Role, method?: string): void {
    const ms = Math.round(a.ms * 1000) / 1000;
    if (method === undefined && this.observer.forward !== undefined)
      this.observer.forward({ chainId: this.chainId, sequencer: a.seq.label, outcome: a.outcome, ms });
    const line = this.fast.line(a.state === 'unresolved' || a.state === 'not_sent' ? 'warn' : 'info');
    if (line === null) return;
    line.str('audit', 'forward');
    if (method !== undefined) line.str('method', method);
    line.str('reqId', req.reqId).str('account', req.account).str('tx', req.hash).json('chainId', this.chainId);
    line.json('sequencer', a.seq.labelJson).str('outcome', a.outcome).str('rule', a.rule).str('role', role).json('ms', ms);
    if (a.detail !== undefined) line.text('detail', a.detail, 400);
    if (a.state === 'not_sent') line.json('sent', false);
    if (req.sender !== null) line.str('sender', req.sender);
    line.end('forward');
  }

  part(seq: Sequencer, state: Attempt['state'], outcome: Outcome, rule: Rule, exit: Exit | null, t: number, detail: string | undefined): Attempt {
    return { seq, state, outcome, rule, exit, ms: performance.now() - t, detail, busy: false, transport: false };
  }
}

function describe(parts: readonly Attempt[]): string[] {
  return parts.map((p) => `${p.seq.label}: ${p.state} (${p.rule}) ${p.detail ?? ''}`.trimEnd());
}

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms));
}
