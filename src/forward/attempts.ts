/**
 * The outcome rules of a forward (docs/design.md §5.2-5.6), written once for every send method
 * (plain, sync, conditional), both strategies (failover, fanout) and every front end:
 * 1. an acceptance is a hash (or the sync method's receipt of it) or a lookup returning this very
 *    transaction, never a wording;
 * 2. a written part with no definite answer is asked again before anything is concluded
 *    (resolve.ts), and only then uncertain;
 * 3. a refusal is definite only when no written sequencer is uncertain: accepted if any accepted,
 *    else 502 with `data.txHash` if any is uncertain, else the first refusal, else 503 not sent.
 * Each sequencer's part (parts.ts) is one audit line (docs/design.md §5.10).
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { Exit } from '../base/errors.js';
import type { Logger } from '../log/log.js';
import { FastLog, millisText } from '../log/log-line.js';
import { notSent, uncertain, type Known, type Reading } from './answer.js';
import {
  type Part,
  type AttemptObserver,
  CommonPart,
  type Concluded,
  describe,
  type ForwardRequest,
  part,
  partOutcome,
  type SendMethod,
  told,
} from './parts.js';
import type { Role } from '../base/reasons.js';
import { type Asking, lookup, resolve } from './resolve.js';
import type { Answer, CallTimes, Upstream } from '../upstreams/upstream.js';
import type { Sequencer } from './sequencer.js';
import { accountTxKey, auditHeadReqId, sequencerPartMsKey } from '../log/audit-fields.js';

/** The rules above for one chain's sequencers, shared by its plain send and its sync send. */
export class Attempts implements Asking {
  constructor(
    private readonly chainId: number,
    readonly times: CallTimes,
    /** The chain's own RPC (`chains[].rpc`), asked too where a sequencer does not confirm a hash; else null. */
    readonly rpc: Upstream | null,
    readonly log: Logger,
    private readonly observer: AttemptObserver = {},
    /** The chain enables the express lane: its audit lines name the lane (`"lane":"plain"` here). */
    private readonly laneNamed = false,
    /** The audit lines' writer: one per chain, shared by its `within` copies (made per sync call). */
    private readonly fast: FastLog = new FastLog(log),
    /** The common path's part (parts.ts), shared by the `within` copies as `fast` is. */
    private readonly common: CommonPart = new CommonPart(),
  ) {}

  /** The same rules within another time budget (a sync call settles within what is left of its wait: sync/budget.ts). */
  within(times: CallTimes): Attempts {
    return new Attempts(this.chainId, times, this.rpc, this.log, this.observer, this.laneNamed, this.fast, this.common);
  }

  /**
   * Sequencers in order, moving on only when one did not definitely answer, written ones resolved
   * meanwhile; `done` told the common path (the first answers with the hash) in the one
   * continuation on its call, anything else once `failoverFrom` decides.
   */
  failover(seqs: readonly Sequencer[], req: ForwardRequest, method: SendMethod, done: Concluded): void {
    let i = 0;
    while (i < seqs.length && !seqs[i]!.eligible) i++;
    if (i === seqs.length) {
      done.concluded(this.decide(req, []));
      return;
    }
    const seq = seqs[i]!;
    const t = performance.now();
    callOf(method, seq, req).then((answer) => {
      let exit: Exit | Promise<Exit>;
      try {
        const r = method.read(answer, req.hash);
        if (r.kind !== 'accepted') exit = this.failoverFrom(seqs, i, this.sent(seq, req, method, r, t), req, method);
        else {
          const a = this.common.of(seq, r.outcome, r.exit, t, r.detail);
          this.finish(req, a, 'final', method);
          exit = a.exit;
        }
      } catch (e) {
        done.failed(e);
        return;
      }
      // Outside the try: the conclusion is `done`'s, never the rules'.
      if (exit instanceof Promise) told(exit, done);
      else done.concluded(exit);
    }, done.failed.bind(done));
  }

  /** The failover from sequencer `from` on, whose part (`first`) is not an acceptance by hash. */
  private async failoverFrom(seqs: readonly Sequencer[], from: number, first: Part | Promise<Part>, req: ForwardRequest, method: SendMethod): Promise<Exit> {
    // Made only off the common path (the first sequencer answers with the hash).
    let parts: Part[] | null = null;
    let resolving: Promise<Part>[] | null = null;
    // Set once another sequencer accepted: the written ones need no resolving any more.
    let others: { accepted: boolean } | null = null;
    for (let i = from; i < seqs.length; i++) {
      const seq = seqs[i]!;
      if (i !== from && !seq.eligible) continue;
      const a = await (i === from ? first : this.sendTo(seq, req, method));
      if (a.state === 'uncertain') {
        const o = (others ??= { accepted: false });
        (resolving ??= []).push(this.resolve(seq, req, method, a, o).then((r) => (this.finish(req, r, o.accepted ? 'loser' : 'final', method), r)));
        continue;
      }
      this.finish(req, a, 'final', method);
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

  /** All at once: the first acceptance answers, else the decision waits for every part, resolved (none to send to: not sent, at once). */
  fanout(seqs: readonly Sequencer[], req: ForwardRequest, method: SendMethod, done: Concluded): void {
    if (seqs.length === 0) {
      done.concluded(this.decide(req, []));
      return;
    }
    const parts: Part[] = [];
    let decided = false;
    // Set once a sequencer accepted: the others' resolving stops.
    const others = { accepted: false };
    const decide = (exit: Exit) => {
      if (decided) return;
      decided = true;
      done.concluded(exit);
    };
    const settled = (a: Part) => {
      const role: Role = decided ? 'loser' : a.state === 'accepted' ? 'winner' : 'pending';
      parts.push(a);
      if (a.state === 'accepted') {
        others.accepted = true;
        decide(a.exit!);
      } else if (parts.length === seqs.length) {
        let exit: Exit;
        try {
          exit = this.decide(req, parts);
        } catch (e) {
          this.log.error({ err: e, tx: req.hash, reqId: req.reqId }, 'fanout decision failed unexpectedly: outcome uncertain');
          exit = uncertain(req.hash);
        }
        decide(exit);
      }
      return role;
    };
    for (const seq of seqs) {
      this.sendTo(seq, req, method)
        .then((a) => (a.state === 'uncertain' ? this.resolve(seq, req, method, a, others) : a))
        .then(
          (a) => this.finish(req, a, settled(a), method),
          (e: unknown) => {
            // The rules threw for this part (a bug): uncertain, never unanswered (only the part's own work caught).
            this.log.error({ err: e, tx: req.hash, reqId: req.reqId, sequencer: seq.label }, 'fanout attempt failed unexpectedly: outcome uncertain');
            settled(part(seq, 'uncertain', 'fault', null, null, performance.now(), 'internal error'));
          },
        );
    }
  }

  /** The decision over every part (rule 3), logged with each part where no sequencer accepted nor refused (for reconciliation). */
  decide(req: ForwardRequest, parts: readonly Part[]): Exit {
    let refused: Part | null = null;
    let uncertainPart = false;
    let busy = false;
    for (const p of parts) {
      if (p.state === 'accepted') return p.exit!;
      if (p.state === 'uncertain') uncertainPart = true;
      else if (p.state === 'refused') refused ??= p;
      else if (p.busy) busy = true;
    }
    if (uncertainPart) {
      this.log.warn(
        { tx: req.hash, account: req.account, reqId: req.reqId, chainId: this.chainId, outcome: 'uncertain', parts: describe(parts) },
        refused !== null
          ? 'a sequencer refused while another that was written could not tell: outcome uncertain'
          : 'no sequencer gave a definite answer: outcome uncertain',
      );
      return uncertain(req.hash);
    }
    if (refused !== null) return refused.exit!;
    this.log.warn(
      { tx: req.hash, account: req.account, reqId: req.reqId, chainId: this.chainId, outcome: 'not_sent', parts: describe(parts) },
      'no sequencer took the transaction: not forwarded',
    );
    return notSent(busy);
  }

  /** One call to one sequencer and the lookup its answer asks for (the caller resolves an uncertain part); never throws. */
  sendTo(seq: Sequencer, req: ForwardRequest, method: SendMethod): Promise<Part> {
    const t = performance.now();
    return callOf(method, seq, req).then((answer) => this.sent(seq, req, method, method.read(answer, req.hash), t));
  }

  /** A call's first reading as a part: a connection lost before the bytes went is called once more (`read` reads the answer then). */
  private sent(seq: Sequencer, req: ForwardRequest, method: SendMethod, r: Reading, t: number): Part | Promise<Part> {
    // A connection lost before the bytes went (reset at connect, a kept-alive one closed by the
    // sequencer): nothing was sent, so once more at once, on a fresh connection.
    if (r.kind === 'not_sent' && r.transport && !r.busy) return method.call(seq, req).then((again) => this.read(seq, req, method.read(again, req.hash), t));
    return this.read(seq, req, r, t);
  }

  /** A call's reading as a part: the common path, the hash at once; else `conclude`. */
  private read(seq: Sequencer, req: ForwardRequest, r: Reading, t: number): Part | Promise<Part> {
    if (r.kind === 'accepted') return part(seq, 'accepted', r.outcome, 'hash', r.exit, t, r.detail);
    if (r.kind === 'uncertain' && r.outcome === 'hash_mismatch')
      this.log.error(
        { tx: req.hash, account: req.account, reqId: req.reqId, sequencer: seq.label, detail: r.detail },
        'SEQUENCER RETURNED A DIFFERENT HASH: not reporting acceptance',
      );
    return this.conclude(seq, req, r, t);
  }

  /** A reading other than an acceptance by hash, with the lookup a suggestive answer asks for. */
  private async conclude(seq: Sequencer, req: ForwardRequest, r: Reading, t: number): Promise<Part> {
    switch (r.kind) {
      case 'accepted':
        return part(seq, 'accepted', r.outcome, 'hash', r.exit, t, r.detail);
      case 'refused':
        return part(seq, 'refused', 'rejected', 'answer', r.exit, t, r.detail);
      case 'not_sent':
        return { ...part(seq, 'not_sent', 'fault', null, null, t, `${r.detail} (not sent)`), busy: r.busy, transport: r.transport };
      case 'uncertain':
        return { ...part(seq, 'uncertain', r.outcome, null, null, t, r.detail), transport: r.transport === true };
      case 'check': {
        const known = await this.lookup(seq, req.hash, performance.now() + this.times.timeoutMs);
        if (known === 'known') return part(seq, 'accepted', r.confirmed.outcome, 'lookup', r.confirmed.exit, t, `${r.detail}; the hash is known`);
        if (known === 'unknown' && r.unconfirmed !== null)
          return part(seq, 'refused', 'rejected', 'answer', r.unconfirmed, t, `${r.detail}; the hash is unknown`);
        return part(
          seq,
          'uncertain',
          'fault',
          null,
          null,
          t,
          `${r.detail}; the lookup ${known === 'unknown' ? 'does not know the hash' : known === 'no_lookup' ? 'is not served' : 'failed'}`,
        );
      }
    }
  }

  /** Rule 2 (resolve.ts). */
  resolve(seq: Sequencer, req: ForwardRequest, method: SendMethod, first: Part, others: { readonly accepted: boolean }): Promise<Part> {
    return resolve(this, seq, req, method, first, others);
  }

  /** eth_getTransactionByHash on the sequencer, then the chain's RPC (resolve.ts). */
  lookup(seq: Upstream, hash: string, deadline: number): Promise<Known> {
    return lookup(this, seq, hash, deadline);
  }

  /**
   * A part's audit line and metrics; a transport fault left standing takes the sequencer out until
   * a probe sees it back. Never throws: a hook that does (a metric, the tracker's) changes no outcome.
   */
  finish(req: ForwardRequest, a: Part, role: Role, method: SendMethod): Role {
    if (a.transport && (a.state === 'uncertain' || a.state === 'not_sent')) a.seq.markDown(a.detail ?? 'transport');
    try {
      this.audit(req, a, role, method.name);
    } catch (e) {
      this.hookFailed(req, a, e);
    }
    // An accepted part always has its rule (hash, lookup, resend).
    if (a.state === 'accepted' && this.observer.accepted !== undefined) {
      try {
        this.observer.accepted(this.chainId, req, a.seq.label, a.rule!);
      } catch (e) {
        this.hookFailed(req, a, e);
      }
    }
    return role;
  }

  private hookFailed(req: ForwardRequest, a: Part, e: unknown): void {
    this.log.error({ err: e, tx: req.hash, reqId: req.reqId, sequencer: a.seq.label, outcome: partOutcome(a) }, 'a forward hook failed: the outcome stands');
  }

  /** The audit line of one sequencer's part (and the forward metrics of a plain send's). */
  audit(req: ForwardRequest, a: Part, role: Role, method?: string): void {
    const us = Math.round(a.ms * 1000);
    const ms = us / 1000;
    if (method === undefined && this.observer.forward !== undefined) this.observer.forward(this.chainId, a.seq.label, a.outcome, ms, 'plain');
    // The line starts with the head and the request's id (audit-fields.ts), in one concatenation.
    const line = this.fast.lineAfter(a.state === 'uncertain' || a.state === 'not_sent' ? 'warn' : 'info', auditHeadReqId(this.laneNamed, method), req.reqId);
    if (line === null) return;
    // The runs of fields that repeat, each one piece (audit-fields.ts): the line as it was field by field.
    line.strAfter(accountTxKey(req.account), req.hash);
    line.jsonAfter(sequencerPartMsKey(this.chainId, a.seq, partOutcome(a), a.outcome, a.rule, role), millisText(us));
    if (a.detail !== undefined) line.text('detail', a.detail, 400);
    if (a.state === 'not_sent') line.json('sent', false);
    if (req.sender !== null) line.str('sender', req.sender);
    line.end('forward');
  }
}

/** One call, a call that throws as a rejected promise (as from an async function): the failover's common path and `sendTo` never throw. */
function callOf(method: SendMethod, seq: Sequencer, req: ForwardRequest): Promise<Answer> {
  try {
    return method.call(seq, req);
  } catch (e) {
    return Promise.reject(e);
  }
}
