/**
 * eth_sendRawTransactionSync (EIP-7966) for one chain. In `receipt` mode the plain send goes
 * through the chain's forwarder and the receipt is read from the chain RPC (receipt-wait.ts);
 * in `forward` mode (below) the sync method goes to the sequencer with the remaining wait (a
 * submission the express lane carries goes as in `receipt` mode: Nitro has no synchronous lane
 * method), and its answers are concluded by the plain send's rules (forward/attempts.ts), read
 * as follows:
 * - a receipt of this very hash: 200, `result` the receipt as the chain gave it (status 0x1 or 0x0);
 * - the EIP's timeout (code 4), "already known", "nonce too low": accepted without a receipt in
 *   the wait (202 sync_timeout, code 4, `data.txHash`) only where the lookup returns this very
 *   transaction; code 4 unconfirmed is uncertain (resent and looked up, then 502 with the hash),
 *   the others unconfirmed are the refusal they say they are;
 * - any other JSON-RPC error: the sequencer's refusal passed through (its code 5 included);
 * - a fault: resolved as for the plain send, then 502 uncertain if written, 503 if not.
 * A call is a flight (forward/flight.ts) on places of its own (`sync.maxWaiting` per chain and
 * thread) and connections of its own, so a wait never holds a connection the plain send needs;
 * beyond it, 503 overloaded before anything is sent. A resend of the same bytes while the first
 * waits joins it (the duplicates table's `waiting`); after a receipt, a resend
 * is answered from it for `sync.receiptTtlMs` and never forwarded again. Drain answers a call
 * whose sequencer knows its hash at once (code 4).
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { ChainConfig } from '../config/config.js';
import { REJECT, type Exit } from '../base/errors.js';
import { peerText, readError, readFault, readPlain, type Reading } from '../forward/answer.js';
import { type ForwardRequest, promised, type SendMethod, told } from '../forward/parts.js';
import { Flights, Places } from '../forward/flight.js';
import type { ChainLink } from '../forward/chain-link.js';
import type { ChainDuplicates } from '../forward/dedup.js';
import type { Sequencer } from '../forward/sequencer.js';
import { FastLog } from '../log/log-line.js';
import type { SubmissionOutcome } from '../base/reasons.js';
import type { Answer, CallTimes } from '../upstreams/upstream.js';
import { executedAnswer, isReceiptOf, pendingAnswer } from './receipt.js';
import { ReceiptWaiter } from './receipt-wait.js';
import { RECEIPT_METHOD, SYNC_METHOD } from '../rpc/rpc-methods.js';
import type { HeadSource } from '../upstreams/chain-rpc/chain-heads.js';
import { withLane } from '../forward/express-send.js';
import { syncBudget, toldWaitMs } from './budget.js';
import type { FlashblocksSource } from '../flashblocks/feed.js';
import { PreconfWait } from './preconfirmed.js';

const DRAINED = Symbol('drained');

/** Receipts kept to answer resends (the oldest goes first), each for `sync.receiptTtlMs`. */
const MAX_RECEIPTS = 10_000;

/** What a sync answer says (forward/answer.ts's readings; the rules in forward/attempts.ts). */
export function readSync(a: Answer, hash: string): Reading {
  if (a.kind === 'result') {
    const exit = isReceiptOf(a.result, hash) ? executedAnswer(a.result) : null;
    if (exit !== null) {
      const r = a.result as { status?: unknown; blockNumber?: unknown };
      return { t: 'accepted', exit, outcome: 'executed', detail: `status ${peerText(r.status)} block ${peerText(r.blockNumber)}` };
    }
    return { t: 'uncertain', outcome: 'hash_mismatch', detail: 'answered something other than the receipt of this transaction' };
  }
  if (a.kind === 'fault') return readFault(a);
  const confirmed = { exit: pendingAnswer(hash), outcome: 'accepted_no_receipt' as const };
  // The EIP's timeout says the transaction was taken: true only where the lookup confirms it,
  // and never a refusal (uncertain where the lookup does not).
  if (a.code === 4) return { t: 'check', confirmed, unconfirmed: null, detail: `code 4: ${a.message.slice(0, 200)}` };
  return readError(a, confirmed);
}

/**
 * A resend of the same bytes by the plain method, for a sync call: read as the plain send's,
 * except that a code 4 is never passed on as a refusal (a client of the sync method reads code
 * 4 as "accepted, no receipt yet"): the lookup decides, else it stays uncertain.
 */
export function readSyncResend(a: Answer, hash: string): Reading {
  if (a.kind === 'error' && a.code === 4) return readSync(a, hash);
  return readPlain(a, hash);
}

/** The sync metrics' hooks. */
export interface SyncObserver {
  /**
   * A sync call answered: what its answer means for the submission (reasons.ts, the one outcome
   * vocabulary: `accepted` is the receipt) and how long it waited (null: answered without a wait).
   */
  sync?(chainId: number, outcome: SubmissionOutcome, seconds: number | null): void;
  /** Sync calls waiting now on this chain (this thread). */
  syncWaiting?(chainId: number, n: number): void;
}

/** What a sync send is built from besides its chain's link, named. */
export interface SyncSendParts {
  /** The chain's plain send (the forwarder's), which the `receipt` mode goes through. */
  readonly plainSend: (req: ForwardRequest) => Exit | PromiseLike<Exit>;
  /** The chain's duplicate table: a call waiting now is in it, and a resend joins it. */
  readonly duplicates: ChainDuplicates;
  readonly observer?: SyncObserver | undefined;
  /**
   * Whether the chain's express lane would carry the submission now (the forwarder's
   * `laneTakes`): in `forward` mode such a call goes as the `receipt` mode's do (the plain
   * send, which the lane carries, then the receipt), Nitro having no synchronous lane method.
   */
  readonly laneTakes?: ((req: ForwardRequest) => boolean) | undefined;
  /** The chain's head source, if it has one: the `receipt` mode asks for a receipt on each head its `rpcWs` subscription tells. */
  readonly heads?: HeadSource | null | undefined;
  /** The chain's flashblocks stream, if it has one (`chains[].flashblocks`): a `receipt`-mode call is answered at the preconfirmation (preconfirmed.ts). */
  readonly flashblocks?: FlashblocksSource | null | undefined;
}

/** Answers given at a preconfirmation: not kept to answer a resend (a resend may ask for the sealed block). */
const PRECONFIRMED = new WeakSet<Exit>();

export class SyncSender {
  private readonly chain: ChainConfig;
  private readonly sequencers: readonly Sequencer[];
  private readonly plainSend: SyncSendParts['plainSend'];
  private readonly duplicates: ChainDuplicates;
  private readonly observer: SyncObserver;
  /** The plain send, then the chain RPC's receipt: every call in `receipt` mode, the express lane's in `forward` mode. */
  private readonly receiptWaiter: ReceiptWaiter | null;
  private readonly receiptMode: boolean;
  private readonly laneTakes: (req: ForwardRequest) => boolean;
  /** A `forward`-mode chain with the express lane: its answers name their lane. */
  private readonly namesLane: boolean;
  private readonly flights: Flights;
  private readonly receipts = new Map<string, { exit: Exit; at: number }>();
  /** Set by drain: forward-mode calls the sequencer knows answer code 4 at once. */
  private draining = false;
  private readonly drainWakers = new Set<() => void>();
  /** The receipt mode's `sync receipt` line. */
  private readonly fast: FastLog;
  private readonly flashblocks: FlashblocksSource | null;

  constructor(
    /** The chain's sequencers, health, outcome rules and chain RPC client. */
    private readonly link: ChainLink,
    parts: SyncSendParts,
  ) {
    const chain = link.chain;
    this.chain = chain;
    this.plainSend = parts.plainSend;
    this.duplicates = parts.duplicates;
    this.observer = parts.observer ?? {};
    this.fast = new FastLog(link.log);
    this.receiptMode = chain.sync.mode === 'receipt';
    this.flashblocks = parts.flashblocks ?? null;
    // Opened now: a call's preconfirmation is read only from a stream already reading.
    if (this.receiptMode && this.flashblocks !== null) this.flashblocks.open();
    const laneTakes = parts.laneTakes;
    // A `forward`-mode chain with the express lane: the lane's submissions wait for their receipt here.
    const expressAside = !this.receiptMode && link.expressEndpoint !== null && link.rpc !== null && laneTakes !== undefined;
    this.namesLane = expressAside;
    this.laneTakes = expressAside ? laneTakes : () => false;
    this.receiptWaiter = this.receiptMode || expressAside ? new ReceiptWaiter(chain, link.rpc!, link.attempts, parts.heads ?? null) : null;
    this.sequencers = this.receiptMode
      ? []
      : link.open({ calls: chain.sync.maxWaiting, sockets: chain.forward.wsConnections, keepWarm: chain.forward.keepWarm });
    const { chainId } = chain;
    const hook = this.observer.syncWaiting?.bind(this.observer);
    this.flights = new Flights({
      table: parts.duplicates.waiting,
      places: new Places(chain.sync.maxWaiting, hook && ((n) => hook(chainId, n)), link.log, {
        msg: 'the sync waiting metrics hook failed (said once): sync calls are unaffected',
        fields: { chainId },
      }),
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
    const viaReceipt = this.receiptMode || this.laneTakes(req);
    if (!viaReceipt && !this.sequencers.some((s) => s.eligible)) return this.counted(REJECT.upstream_unavailable, null);
    const f = this.flights.open(hash, req);
    if (f === null) return this.counted(REJECT.overloaded, null);
    const started = (f.started = performance.now());
    let run: Promise<Exit>;
    if (viaReceipt) run = this.viaReceipt(req, started + waitMs, sealed);
    else {
      // The wait holds everything (sync/budget.ts): the sequencer's part, then settling within the rest.
      const budget = syncBudget(waitMs, this.chain.forward.timeoutMs);
      const attempts = this.link.attempts.within({ timeoutMs: budget.settleMs, queueMs: Math.min(budget.settleMs, this.chain.forward.queueMs) });
      const method = this.method(started + budget.sequencerMs);
      run = this.settleByReceipt(
        req,
        promised((d) => attempts.failover(this.sequencers, req, method, d)),
        started + waitMs,
      );
      // On a chain with the express lane every forwarded answer names its lane (the sequencers' here).
      if (this.namesLane) run = run.then((e) => withLane(e, 'plain'));
    }
    told(run, f);
    return f;
  }

  /**
   * Forward mode: an answer that says the bytes are taken but gives no receipt (code 4 confirmed
   * by the lookup), or a refusal in words that bytes already executed also get ("nonce too low",
   * "already known": a resend of executed bytes, this edge's receipt no longer held, or held by
   * another thread or edge), is settled by the receipt: where the chain has a receipt of this
   * very hash, the answer is that receipt (200), as for the first call; else the answer stands.
   * Asked once, within the wait (docs/design.md §6.2).
   */
  private async settleByReceipt(req: ForwardRequest, run: Promise<Exit>, deadline: number): Promise<Exit> {
    const exit = await run;
    if (exit.reason !== 'sync_timeout' && exit.reason !== 'upstream_rejected') return exit;
    const left = Math.min(deadline - performance.now(), this.chain.forward.timeoutMs);
    if (left < 1) return exit;
    const at = this.link.rpc ?? this.sequencers.find((s) => s.eligible);
    if (at === undefined) return exit;
    const a = await at.call(RECEIPT_METHOD, `["${req.hash}"]`, {
      timeoutMs: left,
      queueMs: Math.max(1, Math.min(left, this.chain.forward.queueMs)),
    });
    const executed = a.kind === 'result' && isReceiptOf(a.result, req.hash) ? executedAnswer(a.result) : null;
    if (executed === null) return exit;
    const line = this.fast.line('info');
    if (line !== null) {
      const r = a.kind === 'result' ? (a.result as { status?: unknown; blockNumber?: unknown }) : {};
      line.str('tx', req.hash).str('account', req.account).str('reqId', req.reqId).str('outcome', executed.outcome).str('was', exit.reason);
      line.text('status', peerText(r.status), 66).text('block', peerText(r.blockNumber), 66).end('sync receipt: settled by the chain');
    }
    return executed;
  }

  /**
   * The sync method as a kind of send: its call held by the sequencer until `sequencerEnd` at
   * the latest (the wait it is told, where the format tells it), its readings, code 4 where a
   * lookup or a resend establishes acceptance; the rest of the wait is for settling (sync/budget.ts).
   */
  private method(sequencerEnd: number): SendMethod {
    const format = this.chain.sync.syncTimeoutFormat;
    const queueMs = this.chain.forward.queueMs;
    return {
      name: SYNC_METHOD,
      call: (seq, req) => {
        // What is left of the sequencer's part now (a second sequencer of a failover gets less).
        const heldMs = Math.max(1, Math.floor(sequencerEnd - performance.now()));
        const times: CallTimes = { timeoutMs: heldMs, queueMs: Math.min(queueMs, heldMs) };
        // Told a little less than it may hold the call, so that its own answer (code 4) comes before the cut.
        const told = toldWaitMs(heldMs);
        const params = format === 'omit' ? `["${req.rawHex}"]` : `["${req.rawHex}",${format === 'hex' ? `"0x${told.toString(16)}"` : String(told)}]`;
        return this.syncCall(seq, req, params, times);
      },
      read: readSync,
      readResend: readSyncResend,
      knownExit: pendingAnswer,
    };
  }

  /** Counts a call's answer; `ms`: how long it waited, null for one answered without a wait (a held receipt, a refusal). */
  private counted(exit: Exit, ms: number | null): Exit {
    this.observer.sync?.(this.chain.chainId, exit.outcome, ms === null ? null : ms / 1000);
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

  /** The plain send (its own audit line, its lane), then the receipt; a line for what the wait came to. */
  private async viaReceipt(req: ForwardRequest, deadline: number, sealed: boolean): Promise<Exit> {
    const t = performance.now();
    // Armed before the send: a slice may carry the transaction before the sequencer's answer arrives.
    const pre = this.flashblocks === null || sealed || !this.receiptMode ? null : new PreconfWait(this.flashblocks, req.hash);
    const out = await this.receiptWaiter!.obtain(req, deadline, this.plainSend, pre);
    if (out.preconfirmed === true) PRECONFIRMED.add(out.exit);
    if (out.exit.reason !== 'ok' && out.exit.reason !== 'sync_timeout') return out.exit;
    const line = this.fast.line('info');
    if (line === null) return out.exit;
    line.str('tx', req.hash).str('account', req.account).str('reqId', req.reqId);
    line.str('outcome', out.exit.outcome);
    // The receipt's fields as the chain gave them: text from outside.
    if (out.receipt !== null) line.text('status', peerText(out.receipt.status), 66).text('block', peerText(out.receipt.blockNumber), 66);
    if (out.preconfirmed === true) line.json('preconfirmed', true);
    line.json('ms', Math.round(performance.now() - t)).end('sync receipt');
    return out.exit;
  }

  /**
   * Drain: every call still waiting for its receipt answers now, code 4 with its hash, where
   * the transaction is known to be accepted: in `receipt` mode every waiting call (its plain
   * send was accepted); in `forward` mode a call whose sequencer knows its hash (asked at once);
   * one the sequencer does not know (yet) waits for the sequencer's own answer, within the
   * wait plus the forward timeout, as only that says whether it was accepted.
   */
  drain(): void {
    this.receiptWaiter?.drain();
    this.draining = true;
    for (const wake of this.drainWakers) wake();
  }

  /**
   * A forward-mode sync call: the sequencer's answer within its part of the wait (`times`), in
   * every format: one that holds the call past it is cut there (told the wait or not), a fault
   * after the write that the rules settle within the rest of the wait (the lookup first: a
   * sequencer that knows the hash makes it 202 code 4). Once drain starts, the EIP's timeout
   * (code 4) where the sequencer knows the hash, which the rules confirm by the same lookup (the
   * receipt may still come after the answer); a hash it does not know (yet) waits for the
   * sequencer's own answer within the call's bound, as only that says whether it was accepted.
   */
  private async syncCall(seq: Sequencer, req: ForwardRequest, params: string, times: CallTimes): Promise<Answer> {
    const call = seq.call(SYNC_METHOD, params, times);
    let wake: (() => void) | undefined;
    const cut = this.draining ? Promise.resolve(DRAINED) : new Promise<typeof DRAINED>((resolve) => this.drainWakers.add((wake = () => resolve(DRAINED))));
    const first = await Promise.race([call, cut]);
    if (wake !== undefined) this.drainWakers.delete(wake);
    if (first !== DRAINED) return first;
    const known = await this.link.attempts.lookup(seq, req.hash, performance.now() + this.chain.forward.timeoutMs);
    return known === 'known' ? { kind: 'error', code: 4, message: 'draining; the sequencer knows the hash', data: undefined } : call;
  }

  /**
   * After the drain: a sync call still at a sequencer was answered (code 4) or cut off with the
   * grace period, so its connection is cut rather than waited for (up to its whole wait).
   */
  close(): Promise<unknown> {
    return Promise.all([...this.sequencers.map((s) => s.close(true)), this.receiptWaiter?.close()]);
  }
}
