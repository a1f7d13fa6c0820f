/**
 * eth_sendRawTransactionSync (EIP-7966) for one chain. In `receipt` mode the plain send goes
 * through the chain's forwarder and the receipt is read from the chain RPC (receipt-wait.ts);
 * in `forward` mode (below) the sync method goes to the sequencer with the remaining wait, and
 * its answers are concluded by the plain send's rules (forward/attempts.ts), read as follows:
 * - a receipt of this very hash: 200, `result` the receipt as the chain gave it (status 0x1 or 0x0);
 * - the EIP's timeout (code 4), "already known", "nonce too low": accepted without a receipt in
 *   the wait (202 sync_timeout, code 4, `data.txHash`) only where the lookup returns this very
 *   transaction; code 4 unconfirmed is unresolved (resent and looked up, then 502 with the hash),
 *   the others unconfirmed are the refusal they say they are;
 * - any other JSON-RPC error: the sequencer's refusal passed through (its code 5 included);
 * - a fault: resolved as for the plain send, then 502 uncertain if written, 503 if not.
 * Calls wait on connections of their own (`sync.maxWaiting` per chain and thread), so a
 * wait never holds a connection the plain send needs; beyond it, 503 overloaded before anything
 * is sent. A resend of the same bytes while the first waits joins it; after a receipt, a resend
 * is answered from it for `sync.receiptTtlMs` and never forwarded again. Drain answers a call
 * whose sequencer knows its hash at once (code 4).
 */
import type { ChainConfig } from '../config.js';
import { reject, REJECT, type Exit } from '../errors.js';
import { peerText, readError, readFault, readPlain, type Reading } from '../forward/answer.js';
import type { ForwardRequest, SendKind } from '../forward/attempts.js';
import type { ChainDuplicates } from '../forward/dedup.js';
import type { ChainForwarder } from '../forward/forwarder.js';
import type { HealthBoard } from '../forward/health-board.js';
import type { Answer, CallTimes, Upstream } from '../forward/upstream.js';
import { openUpstream } from '../forward/open-upstream.js';
import { FastLog } from '../log-line.js';
import { SYNC_METHOD } from '../send-kind.js';
import { executedAnswer, isReceiptOf, pendingAnswer } from './receipt.js';
import { ReceiptWaiter } from './receipt-wait.js';
import type { HeadWatch } from './head-watch.js';

export { SYNC_METHOD, requestedWaitMs } from '../send-kind.js';
const DRAINED = Symbol('drained');
const ENDED = Symbol('the asked wait ended');

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
    return { t: 'unresolved', outcome: 'hash_mismatch', detail: 'answered something other than the receipt of this transaction' };
  }
  if (a.kind === 'fault') return readFault(a);
  const confirmed = { exit: pendingAnswer(hash), outcome: 'accepted_no_receipt' as const };
  // The EIP's timeout says the transaction was taken: true only where the lookup confirms it,
  // and never a refusal (unresolved where the lookup does not).
  if (a.code === 4) return { t: 'check', confirmed, unconfirmed: null, detail: `code 4: ${a.message.slice(0, 200)}` };
  return readError(a, confirmed);
}

/**
 * A resend of the same bytes by the plain method, for a sync call: read as the plain send's,
 * except that a code 4 is never passed on as a refusal (a client of the sync method reads code
 * 4 as "accepted, no receipt yet"): the lookup decides, else it stays unresolved.
 */
export function readSyncResend(a: Answer, hash: string): Reading {
  if (a.kind === 'error' && a.code === 4) return readSync(a, hash);
  return readPlain(a, hash);
}

/** The sync metrics' hooks. */
export interface SyncObserver {
  /** A sync call answered: what it came to and how long it waited (null: answered without a wait). */
  sync?(chainId: number, outcome: SyncOutcome, seconds: number | null): void;
  /** Sync calls waiting now on this chain (this thread). */
  syncWaiting?(chainId: number, n: number): void;
}

/** What a sync call came to, for the metrics (txgate_sync_calls_total's outcome label). */
export type SyncOutcome = 'executed' | 'pending' | 'refused' | 'uncertain' | 'not_sent';
export const SYNC_OUTCOMES: readonly SyncOutcome[] = ['executed', 'pending', 'refused', 'uncertain', 'not_sent'];

function syncOutcome(exit: Exit): SyncOutcome {
  switch (exit.reason) {
    case 'ok':
      return 'executed';
    case 'sync_timeout':
      return 'pending';
    case 'upstream_error':
    case 'internal_error':
      return 'uncertain';
    case 'upstream_unavailable':
    case 'overloaded':
      return 'not_sent';
    default:
      return 'refused';
  }
}

export class SyncSender {
  private readonly sequencers: readonly Upstream[];
  /** `receipt` mode: the plain send, then the chain RPC's receipt. */
  private readonly receiptWaiter: ReceiptWaiter | null;
  private waiting = 0;
  private readonly receipts = new Map<string, { exit: Exit; at: number }>();
  /** Set by drain: forward-mode calls the sequencer knows answer code 4 at once. */
  private draining = false;
  private readonly drainWakers = new Set<() => void>();
  /** The receipt mode's `sync receipt` line. */
  private readonly fast: FastLog;

  constructor(
    private readonly chain: ChainConfig,
    health: { readonly board: HealthBoard; readonly slots: readonly number[] },
    /** The chain's forwarder: its plain send (receipt mode), its outcome rules and its chain RPC client. */
    private readonly plain: Pick<ChainForwarder, 'attempts' | 'rpc' | 'log' | 'forward'>,
    /** The chain's duplicate table: a call waiting now is in it, and a resend joins it. */
    private readonly duplicates: ChainDuplicates,
    private readonly observer: SyncObserver = {},
  ) {
    const conns = chain.sync.maxWaiting;
    this.fast = new FastLog(plain.log);
    this.receiptWaiter = chain.sync.mode === 'receipt' ? new ReceiptWaiter(chain, plain.rpc!, plain.attempts, plain.log) : null;
    this.sequencers =
      this.receiptWaiter !== null ? [] : chain.sequencers.map((u, i) => openUpstream(u, conns, health.board, health.slots[i]!, chain.forward.wsConnections));
  }

  send(req: ForwardRequest, waitMs: number): Exit | Promise<Exit> {
    const { hash } = req;
    const held = this.receipts.get(hash);
    if (held !== undefined && performance.now() - held.at < this.chain.sync.receiptTtlMs) return this.counted(held.exit, null);
    const joined = this.duplicates.waitingCall(hash);
    if (joined !== undefined) return joined;
    if (this.receiptWaiter === null && !this.sequencers.some((s) => s.eligible)) return this.counted(REJECT.upstream_unavailable, null);
    if (this.waiting >= this.chain.sync.maxWaiting) return this.counted(REJECT.overloaded, null);
    const started = performance.now();
    this.observer.syncWaiting?.(this.chain.chainId, ++this.waiting);
    const run = this.receiptWaiter === null ? this.plain.attempts.failover(this.sequencers, req, this.kind(waitMs)) : this.viaReceipt(req, started + waitMs);
    const p = run.then(
      (exit) => this.settled(hash, exit, started),
      (e: unknown) => {
        this.plain.log.error({ err: e, tx: hash, reqId: req.reqId }, 'sync send failed unexpectedly: outcome uncertain');
        return this.settled(hash, reject('upstream_error', undefined, { txHash: hash }), started);
      },
    );
    this.duplicates.wait(hash, p);
    return p;
  }

  /** The sync method as a kind of send: its call with the wait, its readings, code 4 where a lookup or a resend establishes acceptance. */
  private kind(waitMs: number): SendKind {
    const format = this.chain.sync.syncTimeoutFormat;
    const times: CallTimes = { timeoutMs: waitMs + this.chain.forward.timeoutMs, queueMs: this.chain.forward.queueMs };
    return {
      method: SYNC_METHOD,
      call: (seq, req) => {
        const params = format === 'omit' ? `["${req.rawHex}"]` : `["${req.rawHex}",${format === 'hex' ? `"0x${waitMs.toString(16)}"` : String(waitMs)}]`;
        return this.syncCall(seq, req, params, times, format === 'omit' ? waitMs : null);
      },
      read: readSync,
      readResend: readSyncResend,
      knownExit: pendingAnswer,
    };
  }

  /** Counts a call's answer; `ms`: how long it waited, null for one answered without a wait (a held receipt, a refusal). */
  private counted(exit: Exit, ms: number | null): Exit {
    this.observer.sync?.(this.chain.chainId, syncOutcome(exit), ms === null ? null : ms / 1000);
    return exit;
  }

  private settled(hash: string, exit: Exit, started: number): Exit {
    this.observer.syncWaiting?.(this.chain.chainId, --this.waiting);
    if (exit.reason === 'ok' && this.chain.sync.receiptTtlMs > 0) {
      if (this.receipts.size >= MAX_RECEIPTS) this.receipts.delete(this.receipts.keys().next().value!);
      this.receipts.set(hash, { exit, at: performance.now() });
    }
    return this.counted(exit, performance.now() - started);
  }

  /** `receipt` mode: the plain send (its own audit line), then the receipt; a line for what the wait came to. */
  private async viaReceipt(req: ForwardRequest, deadline: number): Promise<Exit> {
    const t = performance.now();
    const out = await this.receiptWaiter!.obtain(req, deadline, (r) => this.plain.forward(r));
    if (out.exit.reason !== 'ok' && out.exit.reason !== 'sync_timeout') return out.exit;
    const line = this.fast.line('info');
    if (line === null) return out.exit;
    line.str('tx', req.hash).str('account', req.account).str('reqId', req.reqId);
    line.str('outcome', out.receipt === null ? 'accepted_no_receipt' : 'executed');
    // The receipt's fields as the chain gave them: text from outside.
    if (out.receipt !== null) line.text('status', peerText(out.receipt.status), 66).text('block', peerText(out.receipt.blockNumber), 66);
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
  /** The chain RPC's head subscription of the `receipt` mode (with `rpcWs`), else null: the chain's tracker shares it. */
  get heads(): HeadWatch | null {
    return this.receiptWaiter?.heads ?? null;
  }

  drain(): void {
    this.receiptWaiter?.drain();
    this.draining = true;
    for (const wake of this.drainWakers) wake();
  }

  /**
   * A forward-mode sync call: the sequencer's answer; or, once drain starts, or at the asked
   * wait's end where the sequencer cannot be told the wait (`syncTimeoutFormat` "omit"), the
   * EIP's timeout (code 4) where the sequencer knows the hash, which the rules confirm by the
   * same lookup (the receipt may still come after the answer). A hash it does not know (yet)
   * waits for the sequencer's own answer, as only that says whether it was accepted.
   */
  private async syncCall(seq: Upstream, req: ForwardRequest, params: string, times: CallTimes, endAfterMs: number | null): Promise<Answer> {
    const call = seq.call(SYNC_METHOD, params, times);
    let wake: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    const cut = this.draining
      ? Promise.resolve(DRAINED)
      : new Promise<typeof DRAINED | typeof ENDED>((resolve) => {
          this.drainWakers.add((wake = () => resolve(DRAINED)));
          if (endAfterMs !== null) timer = setTimeout(() => resolve(ENDED), endAfterMs);
        });
    const first = await Promise.race([call, cut]);
    if (wake !== undefined) this.drainWakers.delete(wake);
    clearTimeout(timer);
    if (first !== DRAINED && first !== ENDED) return first;
    const known = await this.plain.attempts.lookup(seq, req.hash, performance.now() + this.chain.forward.timeoutMs);
    const why = first === DRAINED ? 'draining; the sequencer knows the hash' : 'the asked wait ended; the sequencer knows the hash';
    return known === 'known' ? { kind: 'error', code: 4, message: why, data: undefined } : call;
  }

  /**
   * After the drain: a sync call still at a sequencer was answered (code 4) or cut off with the
   * grace period, so its connection is cut rather than waited for (up to its whole wait).
   */
  close(): Promise<unknown> {
    return Promise.all([...this.sequencers.map((s) => s.close(true)), this.receiptWaiter?.close()]);
  }
}
