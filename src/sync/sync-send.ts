/**
 * eth_sendRawTransactionSync (EIP-7966) for one chain. In `receipt` mode the plain send goes
 * through the chain's forwarder and the receipt is read from the chain RPC (receipt-wait.ts);
 * in `forward` mode (below) the sync method goes to the sequencer with the remaining wait, and
 * its answer is judged with the plain send's rules (forward/answer.ts) plus the receipt's:
 * - a receipt of this very hash: 200, `result` the receipt as the chain gave it (status 0x1 or 0x0);
 * - the EIP's timeout (code 4), "already known", or "nonce too low" for a hash the sequencer
 *   knows: the transaction was accepted without a receipt in the wait: 202 sync_timeout, code 4,
 *   `data.txHash`, never something a client could read as "not sent";
 * - any other JSON-RPC error: the sequencer's refusal passed through (its code 5 included);
 * - a fault: 502 uncertain if the bytes were written, 503 not forwarded if not.
 * Calls wait on connections of their own (`sync.maxWaiting` per chain and thread), so a
 * wait never holds a connection the plain send needs; beyond it, 503 overloaded before anything
 * is sent. A resend of the same bytes while the first waits joins it; after a receipt, a resend
 * is answered from it for `sync.receiptTtlMs` and never forwarded again. Drain answers a call
 * whose sequencer knows its hash at once (code 4).
 */
import type { ChainConfig } from '../config.js';
import { Exit, reject, REJECT } from '../errors.js';
import { isTxObject, judge, knownAfterNonceTooLow } from '../forward/answer.js';
import { Faults, type Attempt, type AttemptOutcome, type ChainForwarder, type ForwardObserver, type ForwardRequest } from '../forward/forwarder.js';
import type { HealthBoard } from '../forward/health-board.js';
import { Sequencer, type Answer, type CallTimes } from '../forward/upstream.js';
import { FastLog } from '../log-line.js';
import { executedAnswer, isReceiptOf, pendingAnswer } from './receipt.js';
import { ReceiptWaiter } from './receipt-wait.js';

export const SYNC_METHOD = 'eth_sendRawTransactionSync';
const DRAINED = Symbol('drained');

/** Receipts kept to answer resends (the oldest goes first), each for `sync.receiptTtlMs`. */
const MAX_RECEIPTS = 10_000;

/**
 * The wait a client asked for (the method's optional second param: ms as an integer or as
 * 0x-hex), capped by `max`; `max` when absent; undefined when malformed.
 */
export function requestedWaitMs(p: unknown, max: number): number | undefined {
  if (p === undefined || p === null) return max;
  let ms: number;
  if (typeof p === 'number') ms = p;
  else if (typeof p === 'string' && /^0x[0-9a-fA-F]{1,12}$/.test(p)) ms = Number.parseInt(p.slice(2), 16);
  else if (typeof p === 'string' && /^\d{1,12}$/.test(p)) ms = Number(p);
  else return undefined;
  if (!Number.isSafeInteger(ms) || ms <= 0) return undefined;
  return Math.min(ms, max);
}

/** What a sync answer means: the Exit, whether the bytes were written, and a line for the audit. */
export function judgeSync(a: Answer, hash: string): SyncVerdict {
  if (a.kind === 'result') {
    if (isReceiptOf(a.result, hash)) {
      const r = a.result as { status?: unknown; blockNumber?: unknown };
      return {
        exit: executedAnswer(a.result),
        outcome: 'executed',
        sent: true,
        detail: `status ${String(r.status)} block ${String(r.blockNumber)}`,
      };
    }
    return {
      exit: reject('upstream_error', 'Sequencer answered with something other than the receipt of this transaction', { txHash: hash }),
      outcome: 'hash_mismatch',
      sent: true,
    };
  }
  if (a.kind === 'error' && a.code === 4) return { exit: pendingAnswer(hash), outcome: 'accepted_no_receipt', sent: true, detail: a.message };
  const v = judge(a, hash);
  if (v.outcome === 'already_known') return { exit: pendingAnswer(hash), outcome: 'already_known', sent: true, detail: v.detail };
  return { exit: v.exit, outcome: v.outcome, sent: v.sent ?? true, detail: v.detail };
}

interface SyncVerdict {
  readonly exit: Exit;
  readonly outcome: AttemptOutcome | 'nonce_too_low';
  readonly sent: boolean;
  readonly detail?: string | undefined;
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
  private readonly sequencers: readonly Sequencer[];
  /** `receipt` mode: the plain send, then the chain RPC's receipt. */
  private readonly receiptWaiter: ReceiptWaiter | null;
  private waiting = 0;
  private readonly inFlight = new Map<string, Promise<Exit>>();
  private readonly receipts = new Map<string, { exit: Exit; at: number }>();
  /** Set by drain: forward-mode calls the sequencer knows answer code 4 at once. */
  private draining = false;
  private readonly drainWakers = new Set<() => void>();
  /** The receipt mode's `sync receipt` line. */
  private readonly fast: FastLog;

  constructor(
    private readonly chain: ChainConfig,
    health: { readonly board: HealthBoard; readonly slots: readonly number[] },
    /** The chain's forwarder: its plain send (receipt mode), its audit line and its verdict when no sequencer answered. */
    private readonly record: Pick<ChainForwarder, 'audit' | 'noAnswer' | 'log' | 'forward'>,
    private readonly observer: ForwardObserver = {},
  ) {
    const conns = chain.sync.maxWaiting;
    this.fast = new FastLog(record.log);
    this.receiptWaiter = chain.sync.mode === 'receipt' ? new ReceiptWaiter(chain, record.log) : null;
    this.sequencers = this.receiptWaiter !== null ? [] : chain.sequencers.map((u, i) => new Sequencer(u, conns, health.board, health.slots[i]!));
  }

  send(req: ForwardRequest, waitMs: number): Exit | Promise<Exit> {
    const { hash } = req;
    const held = this.receipts.get(hash);
    if (held !== undefined && performance.now() - held.at < this.chain.sync.receiptTtlMs) return this.counted(held.exit, null);
    const joined = this.inFlight.get(hash);
    if (joined !== undefined) return joined;
    if (this.receiptWaiter === null && !this.sequencers.some((s) => s.eligible)) return this.counted(REJECT.upstream_unavailable, null);
    if (this.waiting >= this.chain.sync.maxWaiting) return this.counted(REJECT.overloaded, null);
    const started = performance.now();
    this.observer.syncWaiting?.(this.chain.chainId, ++this.waiting);
    const run = this.receiptWaiter === null ? this.failover(req, waitMs) : this.viaReceipt(req, started + waitMs);
    const p = run.then(
      (exit) => this.settled(hash, exit, started),
      (e: unknown) => {
        this.record.log.error({ err: e, tx: hash, reqId: req.reqId }, 'sync send failed unexpectedly: outcome uncertain');
        return this.settled(hash, reject('upstream_error', undefined, { txHash: hash }), started);
      },
    );
    this.inFlight.set(hash, p);
    return p;
  }

  /** Counts a call's answer; `ms`: how long it waited, null for one answered without a wait (a held receipt, a refusal). */
  private counted(exit: Exit, ms: number | null): Exit {
    this.observer.sync?.(this.chain.chainId, syncOutcome(exit), ms === null ? null : ms / 1000);
    return exit;
  }

  private settled(hash: string, exit: Exit, started: number): Exit {
    this.observer.syncWaiting?.(this.chain.chainId, --this.waiting);
    this.inFlight.delete(hash);
    if (exit.reason === 'ok' && this.chain.sync.receiptTtlMs > 0) {
      if (this.receipts.size >= MAX_RECEIPTS) this.receipts.delete(this.receipts.keys().next().value!);
      this.receipts.set(hash, { exit, at: performance.now() });
    }
    return this.counted(exit, performance.now() - started);
  }

  /** `receipt` mode: the plain send (its own audit line), then the receipt; a line for what the wait came to. */
  private async viaReceipt(req: ForwardRequest, deadline: number): Promise<Exit> {
    const t = performance.now();
    const out = await this.receiptWaiter!.obtain(req, deadline, (r) => this.record.forward(r));
    if (out.exit.reason !== 'ok' && out.exit.reason !== 'sync_timeout') return out.exit;
    const line = this.fast.line('info');
    if (line === null) return out.exit;
    line.str('tx', req.hash).str('account', req.account).str('reqId', req.reqId);
    line.str('outcome', out.receipt === null ? 'accepted_no_receipt' : 'executed');
    // The receipt's fields as the chain gave them: text from outside.
    if (out.receipt !== null) line.text('status', String(out.receipt.status), 66).text('block', String(out.receipt.blockNumber), 66);
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
   * A forward-mode sync call: the sequencer's answer, or, once drain starts, code 4 with the
   * hash if the sequencer knows it (the receipt may still come after this process is gone).
   */
  private async syncCall(seq: Sequencer, req: ForwardRequest, params: string, times: CallTimes, lookup: CallTimes): Promise<Answer | Exit> {
    const call = seq.call(SYNC_METHOD, params, times);
    let wake: (() => void) | undefined;
    const drained = this.draining ? Promise.resolve(DRAINED) : new Promise<typeof DRAINED>((resolve) => this.drainWakers.add((wake = () => resolve(DRAINED))));
    const first = await Promise.race([call, drained]);
    if (wake !== undefined) this.drainWakers.delete(wake);
    if (first !== DRAINED) return first;
    const known = await seq.call('eth_getTransactionByHash', `["${req.hash}"]`, lookup);
    return known.kind === 'result' && isTxObject(known.result, req.hash) ? pendingAnswer(req.hash) : call;
  }

  /** Sequencers in order; on to the next only after a fault (the same bytes are safe to resend). */
  private async failover(req: ForwardRequest, waitMs: number): Promise<Exit> {
    const format = this.chain.sync.syncTimeoutFormat;
    const params = format === 'omit' ? `["${req.rawHex}"]` : `["${req.rawHex}",${format === 'hex' ? `"0x${waitMs.toString(16)}"` : String(waitMs)}]`;
    const times = { timeoutMs: waitMs + this.chain.forward.timeoutMs, queueMs: this.chain.forward.queueMs };
    const lookupTimes = { timeoutMs: this.chain.forward.timeoutMs, queueMs: this.chain.forward.queueMs };
    const faults = new Faults();
    for (const seq of this.sequencers) {
      if (!seq.eligible) continue;
      const t = performance.now();
      const a = await this.syncCall(seq, req, params, times, lookupTimes);
      if (a instanceof Exit) {
        // Draining, and the sequencer knows the hash: accepted, the receipt not yet in.
        const attempt = {
          seq,
          outcome: 'accepted_no_receipt',
          exit: a,
          ms: performance.now() - t,
          detail: 'draining; the sequencer knows the hash',
          sent: true,
          busy: false,
        } as const;
        this.record.audit(req, attempt, 'final', SYNC_METHOD);
        return a;
      }
      let v = judgeSync(a, req.hash);
      if (v.outcome === 'nonce_too_low' || (v.outcome === 'fault' && v.sent)) {
        // Nonce too low, or written and no answer within the wait: accepted (the receipt is
        // still to come) if the sequencer knows this very hash, as for the plain send.
        const known = await seq.call('eth_getTransactionByHash', `["${req.hash}"]`, lookupTimes);
        if (v.outcome === 'nonce_too_low') {
          const k = knownAfterNonceTooLow({ outcome: 'nonce_too_low', exit: v.exit, detail: v.detail }, known, req.hash);
          v = { exit: k.outcome === 'nonce_known' ? pendingAnswer(req.hash) : k.exit, outcome: k.outcome, sent: true, detail: k.detail };
        } else if (known.kind === 'result' && isTxObject(known.result, req.hash))
          v = { exit: pendingAnswer(req.hash), outcome: 'accepted_no_receipt', sent: true, detail: `${v.detail ?? 'no answer'}; the sequencer knows the hash` };
      }
      const attempt: Attempt = {
        seq,
        outcome: v.outcome === 'nonce_too_low' ? 'rejected' : v.outcome,
        exit: v.exit,
        ms: performance.now() - t,
        detail: v.detail,
        sent: v.sent,
        busy: a.kind === 'fault' && a.busy === true,
      };
      // The plain send's audit line and its verdict when no sequencer answered (forwarder.ts).
      this.record.audit(req, attempt, 'final', SYNC_METHOD);
      if (v.outcome !== 'fault') return v.exit;
      faults.add(attempt);
      if (a.kind === 'fault' && a.why.startsWith('transport')) seq.markDown(a.why);
    }
    return this.record.noAnswer(req, faults);
  }

  /**
   * After the drain: a sync call still at a sequencer was answered (code 4) or cut off with the
   * grace period, so its connection is cut rather than waited for (up to its whole wait).
   */
  close(): Promise<unknown> {
    return Promise.all([...this.sequencers.map((s) => s.close(true)), this.receiptWaiter?.close()]);
  }
}
