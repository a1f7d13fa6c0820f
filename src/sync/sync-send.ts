/**
 * eth_sendRawTransactionSync (EIP-7966) for one chain, in `forward` mode: the sync method goes
 * to the sequencer with the remaining wait, and its answer is judged with the plain send's
 * rules (forward/answer.ts) plus the receipt's:
 * - a receipt of this very hash: 200, `result` the receipt as the chain gave it (status 0x1 or 0x0);
 * - the EIP's timeout (code 4), "already known", or "nonce too low" for a hash the sequencer
 *   knows: the transaction was accepted without a receipt in the wait: 202 sync_timeout, code 4,
 *   `data.txHash`, never something a client could read as "not sent";
 * - any other JSON-RPC error: the sequencer's refusal passed through (its code 5 included);
 * - a fault: 502 uncertain if the bytes were written, 503 not forwarded if not.
 * Calls wait on connections of their own (`sync.maxWaiting` per chain and thread), so a
 * wait never holds a connection the plain send needs; beyond it, 503 overloaded before anything
 * is sent. A resend of the same bytes while the first waits joins it; after a receipt, a resend
 * is answered from it for a while and never forwarded again.
 */
import type { ChainConfig } from '../config.js';
import { Exit, reject, REJECT } from '../errors.js';
import { isTxObject, judge, knownAfterNonceTooLow } from '../forward/answer.js';
import { Faults, type Attempt, type AttemptOutcome, type ChainForwarder, type ForwardRequest } from '../forward/forwarder.js';
import type { HealthBoard } from '../forward/health-board.js';
import { Sequencer, type Answer } from '../forward/upstream.js';

export const SYNC_METHOD = 'eth_sendRawTransactionSync';

/** How long an answered receipt is kept to answer a resend of the same bytes. */
const RECEIPT_TTL_MS = 60_000;
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

/** A receipt of `hash` as a sequencer gave it. */
function isReceiptOf(v: unknown, hash: string): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as { transactionHash?: unknown; status?: unknown };
  return typeof r.transactionHash === 'string' && r.transactionHash.toLowerCase() === hash;
}

/** The answer for a transaction accepted without a receipt within the wait. */
export const pendingAnswer = (hash: string): Exit => reject('sync_timeout', undefined, { txHash: hash });

/** What a sync answer means: the Exit, whether the bytes were written, and a line for the audit. */
export function judgeSync(a: Answer, hash: string): SyncVerdict {
  if (a.kind === 'result') {
    if (isReceiptOf(a.result, hash)) {
      const r = a.result as { status?: unknown; blockNumber?: unknown };
      return {
        exit: new Exit(200, 'ok', ',"result":' + JSON.stringify(a.result) + '}'),
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

export class SyncSender {
  private readonly sequencers: readonly Sequencer[];
  private waiting = 0;
  private readonly inFlight = new Map<string, Promise<Exit>>();
  private readonly receipts = new Map<string, { exit: Exit; at: number }>();

  constructor(
    private readonly chain: ChainConfig,
    health: { readonly board: HealthBoard; readonly slots: readonly number[] },
    /** The chain's forwarder: its audit line and its verdict when no sequencer answered. */
    private readonly record: Pick<ChainForwarder, 'audit' | 'noAnswer' | 'log'>,
  ) {
    const conns = chain.sync.maxWaiting;
    this.sequencers = chain.sequencers.map((u, i) => new Sequencer(u, conns, health.board, health.slots[i]!));
  }

  send(req: ForwardRequest, waitMs: number): Exit | Promise<Exit> {
    const { hash } = req;
    const held = this.receipts.get(hash);
    if (held !== undefined && performance.now() - held.at < RECEIPT_TTL_MS) return held.exit;
    const joined = this.inFlight.get(hash);
    if (joined !== undefined) return joined;
    if (!this.sequencers.some((s) => s.eligible)) return REJECT.upstream_unavailable;
    if (this.waiting >= this.chain.sync.maxWaiting) return REJECT.overloaded;
    this.waiting++;
    const p = this.failover(req, waitMs).then(
      (exit) => this.settled(hash, exit),
      (e: unknown) => {
        this.record.log.error({ err: e, tx: hash, reqId: req.reqId }, 'sync send failed unexpectedly: outcome uncertain');
        return this.settled(hash, reject('upstream_error', undefined, { txHash: hash }));
      },
    );
    this.inFlight.set(hash, p);
    return p;
  }

  private settled(hash: string, exit: Exit): Exit {
    this.waiting--;
    this.inFlight.delete(hash);
    if (exit.reason === 'ok') {
      if (this.receipts.size >= MAX_RECEIPTS) this.receipts.delete(this.receipts.keys().next().value!);
      this.receipts.set(hash, { exit, at: performance.now() });
    }
    return exit;
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
      const a = await seq.call(SYNC_METHOD, params, times);
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

  close(): Promise<unknown> {
    return Promise.all(this.sequencers.map((s) => s.close()));
  }
}
