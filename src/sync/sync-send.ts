/**
 * eth_sendRawTransactionSync (EIP-7966) for one chain, as docs/design.md §6.2 says. `receipt` mode, and
 * a submission the express lane carries (Nitro has no synchronous lane method): the plain send, then
 * the receipt (receipt-wait.ts). `forward` mode: the sync method at the sequencer for its part of the wait
 * (budget.ts), concluded by the plain send's rules. A call is a flight (forward/flight.ts) on places
 * and connections of its own, so a wait never holds a connection the plain send needs.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import { REJECT, type Exit } from '../base/errors.js';
import { peerText, readError, readFault, readPlain, type Reading } from '../forward/answer.js';
import { type ForwardRequest, promised, type SendMethod, told } from '../forward/parts.js';
import { Flights, Places } from '../forward/flight.js';
import type { ChainLink } from '../forward/chain-link.js';
import type { ChainDuplicates } from '../forward/dedup.js';
import type { Sequencer } from '../forward/sequencer.js';
import { FastLog, type LogLine } from '../log/log-line.js';
import type { SubmissionOutcome } from '../base/reasons.js';
import type { Answer } from '../upstreams/upstream.js';
import { askReceipt, pendingAnswer, receiptIn } from './receipt.js';
import { type ReceiptCallEnd, ReceiptWaiter } from './receipt-wait.js';
import { SYNC_METHOD } from '../rpc/rpc-methods.js';
import type { HeadSource } from '../upstreams/chain-rpc/chain-heads.js';
import { withLane } from '../forward/express-send.js';
import { syncBudget, toldWaitMs } from './budget.js';
import type { FlashblocksSource } from '../flashblocks/feed.js';

/** Receipts kept to answer resends (the oldest goes first), each for `sync.receiptTtlMs`. */
const MAX_RECEIPTS = 10_000;

/** What a sync answer says (forward/answer.ts's readings; the rules in forward/attempts.ts). */
export function readSync(a: Answer, hash: string): Reading {
  if (a.kind === 'result') {
    const got = receiptIn(a, hash);
    if (got === null) return { kind: 'uncertain', outcome: 'hash_mismatch', detail: 'answered something other than the receipt of this transaction' };
    const { status, blockNumber } = got.receipt;
    return { kind: 'accepted', exit: got.exit, outcome: 'executed', detail: `status ${peerText(status)} block ${peerText(blockNumber)}` };
  }
  if (a.kind === 'fault') return readFault(a);
  const confirmed = { exit: pendingAnswer(hash), outcome: 'accepted_no_receipt' as const };
  // The EIP's timeout says the transaction was taken: true where the lookup confirms it, else uncertain, never a refusal.
  if (a.code === 4) return { kind: 'check', confirmed, unconfirmed: null, detail: `code 4: ${a.message.slice(0, 200)}` };
  return readError(a, confirmed);
}

/**
 * A resend of the same bytes by the plain method, for a sync call: read as the plain send's,
 * except a code 4, which a sync client reads as "accepted, no receipt yet": never a refusal.
 */
export function readSyncResend(a: Answer, hash: string): Reading {
  if (a.kind === 'error' && a.code === 4) return readSync(a, hash);
  return readPlain(a, hash);
}

/** The sync metrics' hooks. */
export interface SyncObserver {
  /** A sync call answered: its outcome (reasons.ts; `accepted` is the receipt) and its wait (null: answered without one). */
  sync?(chainId: number, outcome: SubmissionOutcome, seconds: number | null): void;
  /** Sync calls waiting now on this chain (this thread). */
  syncWaiting?(chainId: number, n: number): void;
}

/** What a sync send is built from besides its chain's link. */
export interface SyncSendParts {
  /** The chain's plain send (the forwarder's): the `receipt` mode's send. */
  readonly plainSend: (req: ForwardRequest) => Exit | PromiseLike<Exit>;
  /** The chain's duplicates table: a call waiting now is in it, and a resend joins it. */
  readonly duplicates: ChainDuplicates;
  readonly observer?: SyncObserver | undefined;
  /** Whether the express lane would carry the submission now (the forwarder's `laneTakes`): such a call goes as in `receipt` mode. */
  readonly laneTakes?: ((req: ForwardRequest) => boolean) | undefined;
  /** The chain's head source: a `receipt`-mode call asks for its receipt on each head. */
  readonly heads?: HeadSource | null | undefined;
  /** The chain's flashblocks stream: a `receipt`-mode call is answered at the preconfirmation (preconfirmed.ts). */
  readonly flashblocks?: FlashblocksSource | null | undefined;
}

/** Answers given at a preconfirmation: not kept to answer a resend (a resend may ask for the sealed block). */
const PRECONFIRMED = new WeakSet<Exit>();

export class SyncSender {
  private readonly chain: ChainLink['chain'];
  private readonly sequencers: readonly Sequencer[];
  /** Whether a call goes by the plain send and the receipt: every call in `receipt` mode, the express lane's in `forward` mode. */
  private readonly byReceipt: (req: ForwardRequest) => boolean;
  private readonly receiptWaiter: ReceiptWaiter | null;
  /** A `forward`-mode chain with the express lane: its answers name their lane. */
  private readonly namesLane: boolean;
  private readonly flights: Flights;
  private readonly receipts = new Map<string, { exit: Exit; at: number }>();
  /** Set by drain: forward-mode calls the sequencer knows answer code 4 at once. */
  private draining = false;
  private readonly drainWakers = new Set<() => void>();
  /** The `sync receipt` lines. */
  private readonly fast: FastLog;

  constructor(
    /** The chain's sequencers, health, outcome rules and chain RPC client. */
    private readonly link: ChainLink,
    private readonly parts: SyncSendParts,
  ) {
    const { chain } = link;
    const { chainId, sync } = chain;
    this.chain = chain;
    this.fast = new FastLog(link.log);
    const receiptMode = sync.mode === 'receipt';
    const laneTakes = parts.laneTakes;
    // A `forward`-mode chain with the express lane: the lane's submissions wait for their receipt here.
    this.namesLane = !receiptMode && link.expressEndpoint !== null && link.rpc !== null && laneTakes !== undefined;
    this.byReceipt = receiptMode ? () => true : this.namesLane ? laneTakes! : () => false;
    this.receiptWaiter =
      receiptMode || this.namesLane
        ? new ReceiptWaiter(link, link.rpc!, parts.plainSend, parts.heads ?? null, receiptMode ? (parts.flashblocks ?? null) : null)
        : null;
    // Not kept warm (src/upstreams/keep-warm.ts): a sync call holds its connection for its wait, and the drain's lookup
    // must not wait behind it for a connection a probe proved (keep-warm is the forwarder's, the plain and conditional sends').
    this.sequencers = receiptMode ? [] : link.open({ calls: sync.maxWaiting, sockets: chain.forward.wsConnections });
    const hook = parts.observer?.syncWaiting?.bind(parts.observer);
    this.flights = new Flights({
      table: parts.duplicates.waiting,
      places: new Places(sync.maxWaiting, hook, chainId, link.log, 'the sync waiting metrics hook failed (said once): sync calls are unaffected'),
      log: link.log,
      failure: 'sync send failed unexpectedly: outcome uncertain',
      ended: (f, exit) => this.settled(f.key, exit, f.started),
    });
  }

  /** A sync call: its answer within `waitMs`; `sealed`: the sealed block's receipt, never the preconfirmation's. */
  send(req: ForwardRequest, waitMs: number, sealed = false): Exit | PromiseLike<Exit> {
    const { hash } = req;
    const held = this.receipts.get(hash);
    if (held !== undefined && performance.now() - held.at < this.chain.sync.receiptTtlMs) return this.counted(held.exit, null);
    const joined = this.flights.joined(hash);
    if (joined !== undefined) return joined;
    const byReceipt = this.byReceipt(req);
    if (!byReceipt && !this.sequencers.some((s) => s.eligible)) return this.counted(REJECT.upstream_unavailable, null);
    const f = this.flights.open(hash, req);
    if (f === null) return this.counted(REJECT.overloaded, null);
    const started = (f.started = performance.now());
    told(byReceipt ? this.viaReceipt(req, started + waitMs, sealed) : this.forwarded(req, started, waitMs), f);
    return f;
  }

  /**
   * Forward mode: the sync method at the sequencers for their part of the wait (budget.ts); an
   * answer executed bytes also get (code 4, "nonce too low", "already known": a resend, its receipt
   * not held here) is settled by the receipt, asked once within the wait (docs/design.md §6.2).
   */
  private async forwarded(req: ForwardRequest, started: number, waitMs: number): Promise<Exit> {
    const budget = syncBudget(waitMs, this.chain.forward.timeoutMs);
    const attempts = this.link.attempts.within({ timeoutMs: budget.settleMs, queueMs: Math.min(budget.settleMs, this.chain.forward.queueMs) });
    const method = this.method(started + budget.sequencerMs);
    let exit = await promised((d) => attempts.failover(this.sequencers, req, method, d));
    const left = Math.min(started + waitMs - performance.now(), this.chain.forward.timeoutMs);
    const at = this.link.rpc ?? this.sequencers.find((s) => s.eligible);
    const settles = (exit.reason === 'sync_timeout' || exit.reason === 'upstream_rejected') && left >= 1 && at !== undefined;
    const got = settles ? await askReceipt(at, req.hash, left, this.chain.forward) : null;
    if (got !== null) {
      this.receiptLine(req, got, exit.reason)?.end('sync receipt: settled by the chain');
      exit = got.exit;
    }
    // On a chain with the express lane every forwarded answer names its lane (the sequencers' here).
    return this.namesLane ? withLane(exit, 'plain') : exit;
  }

  /** The plain send (its own audit line, its lane), then the receipt; a line for what the wait came to. */
  private async viaReceipt(req: ForwardRequest, deadline: number, sealed: boolean): Promise<Exit> {
    const t = performance.now();
    const out = await this.receiptWaiter!.obtain(req, deadline, sealed);
    if (out.preconfirmed === true) PRECONFIRMED.add(out.exit);
    if (out.exit.reason !== 'ok' && out.exit.reason !== 'sync_timeout') return out.exit;
    this.receiptLine(req, out, null)
      ?.json('ms', Math.round(performance.now() - t))
      .end('sync receipt');
    return out.exit;
  }

  /** A `sync receipt` line begun (null: info is off); `was`: the answer the receipt settled. The receipt's fields are text from outside. */
  private receiptLine(req: ForwardRequest, end: ReceiptCallEnd, was: string | null): LogLine | null {
    const line = this.fast.line('info');
    if (line === null) return null;
    line.str('tx', req.hash).str('account', req.account).str('reqId', req.reqId).str('outcome', end.exit.outcome);
    if (was !== null) line.str('was', was);
    if (end.receipt !== null) line.text('status', peerText(end.receipt.status), 66).text('block', peerText(end.receipt.blockNumber), 66);
    if (end.preconfirmed === true) line.json('preconfirmed', true);
    return line;
  }

  /** The sync method as a kind of send, its call held by the sequencer until `sequencerEnd` at the latest (budget.ts). */
  private method(sequencerEnd: number): SendMethod {
    return {
      name: SYNC_METHOD,
      call: (seq, req) => this.syncCall(seq, req, sequencerEnd),
      read: readSync,
      readResend: readSyncResend,
      knownExit: pendingAnswer,
    };
  }

  /** Counts a call's answer; `ms`: how long it waited, null for one answered without a wait (a held receipt, a refusal). */
  private counted(exit: Exit, ms: number | null): Exit {
    this.parts.observer?.sync?.(this.chain.chainId, exit.outcome, ms === null ? null : ms / 1000);
    return exit;
  }

  /** A call's end (its flight's): a receipt kept to answer resends, the answer counted. */
  private settled(hash: string, exit: Exit, started: number): void {
    if (exit.reason === 'ok' && this.chain.sync.receiptTtlMs > 0 && !PRECONFIRMED.has(exit)) {
      if (this.receipts.size >= MAX_RECEIPTS) this.receipts.delete(this.receipts.keys().next().value!);
      this.receipts.set(hash, { exit, at: performance.now() });
    }
    this.counted(exit, performance.now() - started);
  }

  /**
   * Drain: a call waiting for the receipt of a transaction known to be accepted answers now, code 4 with
   * its hash (in `forward` mode where the sequencer knows the hash, asked at once: syncCall); one not
   * known (yet) waits for the sequencer's own answer in its bounds: only that says if it was accepted.
   */
  drain(): void {
    this.receiptWaiter?.drain();
    this.draining = true;
    for (const wake of this.drainWakers) wake();
  }

  /**
   * A forward-mode sync call, cut at what is left of the sequencer's part of the wait (a second sequencer of a
   * failover gets less) in every format; once drain starts, code 4 where the sequencer knows the hash.
   */
  private async syncCall(seq: Sequencer, req: ForwardRequest, sequencerEnd: number): Promise<Answer> {
    const heldMs = Math.max(1, Math.floor(sequencerEnd - performance.now()));
    const { syncTimeoutFormat: format } = this.chain.sync;
    // Told a little less than it may hold the call, so that its own answer (code 4) comes before the cut.
    const told = toldWaitMs(heldMs);
    const params = format === 'omit' ? `["${req.rawHex}"]` : `["${req.rawHex}",${format === 'hex' ? `"0x${told.toString(16)}"` : String(told)}]`;
    const call = seq.call(SYNC_METHOD, params, { timeoutMs: heldMs, queueMs: Math.min(this.chain.forward.queueMs, heldMs) });
    let wake: (() => void) | undefined;
    const drained = this.draining ? Promise.resolve(null) : new Promise<null>((resolve) => this.drainWakers.add((wake = () => resolve(null))));
    const first = await Promise.race([call, drained]);
    if (wake !== undefined) this.drainWakers.delete(wake);
    if (first !== null) return first;
    const known = await this.link.attempts.lookup(seq, req.hash, performance.now() + this.chain.forward.timeoutMs);
    return known === 'known' ? { kind: 'error', code: 4, message: 'draining; the sequencer knows the hash', data: undefined } : call;
  }

  /** After the drain: a call still at a sequencer is cut with its connection, not waited for (up to its whole wait). */
  close(): Promise<unknown> {
    return Promise.all([...this.sequencers.map((s) => s.close(true)), this.receiptWaiter?.close()]);
  }
}
