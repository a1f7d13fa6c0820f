/**
 * What a submission comes to, in the kit's words: the outcome of one submission, of one sync
 * send and of a wait for the receipt, the receipt, and how txgate's answer is read into them
 * (`classify`, by the outcome table: outcomes.ts). Shared by the kit (gate.ts), the submitter
 * behind every adapter (submitter.ts) and the edge's status (status.ts).
 */
import type { RpcAnswer } from './http.js';
import type { TlsCause } from './tls-cause.js';
import { kindOf } from './outcomes.js';

/** Which lane carried a submission on a chain with Timeboost's express lane (txgate's `X-Txgate-Lane`). */
export type Lane = 'express' | 'plain';

/** The lane an answer names (its `X-Txgate-Lane` header), or undefined: the chain has no express lane, or nothing was forwarded. */
export function laneOf(headers: Readonly<Record<string, string | string[] | undefined>>): Lane | undefined {
  const lane = headers['x-txgate-lane'];
  return lane === 'express' || lane === 'plain' ? lane : undefined;
}

/** What one submission came to. Never thrown: every protocol answer is one of these. */
export type SubmitOutcome =
  /**
   * The sequencer accepted it: the hash (not yet a receipt). `lane`: on a chain with Timeboost's
   * express lane, which lane carried it (txgate's `X-Txgate-Lane` header); absent elsewhere.
   */
  | { readonly kind: 'accepted'; readonly hash: string; readonly lane?: Lane }
  /** Refused for a reason that resending the same bytes will not change (400, 401, 402, 403, 413, 421, or the sequencer's own JSON-RPC error). */
  | { readonly kind: 'rejected'; readonly hash: string; readonly reason: string; readonly code: number; readonly message: string; readonly status: number }
  /** 429: wait this long (with jitter), then the same bytes may go again. */
  | { readonly kind: 'rate_limited'; readonly hash: string; readonly retryAfterMs: number }
  /** 503 or no connection: definitely not forwarded; the same bytes may go again after a backoff (txgate's retry table). */
  | { readonly kind: 'not_forwarded'; readonly hash: string; readonly reason: string }
  /** A timeout, a 502, a lost connection: it may or may not have been accepted. Check the receipt of `hash`; resend only these bytes. */
  | { readonly kind: 'uncertain'; readonly hash: string; readonly why: string };

/** What one eth_sendRawTransactionSync came to (`submitSync`). */
export type SyncOutcome =
  /**
   * Executed: the receipt as the chain gave it (`status` "0x1" success, "0x0" reverted). `lane`:
   * on a chain with the express lane, which lane carried it (as for `accepted`).
   */
  | { readonly kind: 'executed'; readonly hash: string; readonly receipt: Receipt & Readonly<Record<string, unknown>>; readonly lane?: Lane }
  /** Accepted, no receipt within the wait: not lost; look the hash up (waitForReceipt). */
  | { readonly kind: 'pending'; readonly hash: string; readonly lane?: Lane }
  | Exclude<SubmitOutcome, { kind: 'accepted' }>;

export interface Receipt {
  readonly transactionHash: string;
  /** "0x1" executed, "0x0" reverted. */
  readonly status: string;
  readonly blockNumber: string;
  readonly [field: string]: unknown;
}

export type WaitOutcome =
  | { readonly kind: 'mined'; readonly hash: string; readonly receipt: Receipt; readonly status: 'success' | 'reverted' }
  | Extract<SubmitOutcome, { kind: 'rejected' }>
  /** Replaced: another transaction of the same sender and nonce was included (the edge tracks the chain: docs/tracking.md). */
  | { readonly kind: 'replaced'; readonly hash: string; readonly replacedBy: string | null }
  /** Dropped: not included, and the chain no longer knows it; its nonce is unused (the edge tracks the chain). */
  | { readonly kind: 'dropped'; readonly hash: string }
  /** Expired: a conditional transaction whose bound the chain passed unincluded (docs/conditional.md); its nonce is unused. */
  | { readonly kind: 'expired'; readonly hash: string; readonly expiredBy: { readonly bound: string; readonly head: number } | null }
  /** No receipt (with the confirmations asked) within the time given: the transaction may still land. */
  | { readonly kind: 'timeout'; readonly hash: string; readonly last: SubmitOutcome | null }
  /**
   * Every attempt until `timeoutMs` was answered "not sent" (rate_limited, not_forwarded):
   * nothing reached a sequencer, so nothing can land. `last` is the last answer.
   */
  | { readonly kind: 'gave_up'; readonly hash: string; readonly last: Extract<SubmitOutcome, { kind: 'rate_limited' | 'not_forwarded' }> };

export class TxgateError extends Error {
  constructor(
    message: string,
    readonly reason: string,
    /** Where txgate could not be reached over TLS: why (tls-cause.ts). */
    readonly tls?: TlsCause,
  ) {
    super(message);
    this.name = 'TxgateError';
  }
}

/** What txgate's answer means for the client (docs/design.md §1.2; docs/clients.md). */
export function classify(a: RpcAnswer, hash: string): SubmitOutcome {
  if (a.kind === 'failed') {
    if (!a.sent) return { kind: 'not_forwarded', hash, reason: 'unreachable' };
    return { kind: 'uncertain', hash, why: a.why };
  }
  if (a.kind === 'result') {
    if (typeof a.result === 'string' && a.result.toLowerCase() === hash) {
      const lane = laneOf(a.headers);
      return lane === undefined ? { kind: 'accepted', hash } : { kind: 'accepted', hash, lane };
    }
    return { kind: 'uncertain', hash, why: `answered ${String(a.result).slice(0, 80)}, not the hash of these bytes` };
  }
  const data = (typeof a.data === 'object' && a.data !== null ? a.data : {}) as { reason?: unknown; retryAfterMs?: unknown };
  const known = typeof data.reason === 'string' ? data.reason : undefined;
  const reason = known ?? 'unexpected_answer';
  const kind = kindOf(known, a.status);
  if (kind === 'rejected') return { kind: 'rejected', hash, reason, code: a.code, message: a.message, status: a.status };
  if (kind === 'rate_limited') {
    const header = Number(a.headers['retry-after']);
    const retryAfterMs = typeof data.retryAfterMs === 'number' ? data.retryAfterMs : Number.isFinite(header) ? header * 1000 : 1000;
    return { kind: 'rate_limited', hash, retryAfterMs };
  }
  if (kind === 'not_forwarded') return { kind: 'not_forwarded', hash, reason };
  return { kind: 'uncertain', hash, why: `HTTP ${a.status} ${reason}: ${a.message}` };
}

/** The bytes of a 0x-hex signed transaction (a TxgateError where it is not). */
export function hexBytes(rawTx: string): Uint8Array {
  if (!/^0x(?:[0-9a-fA-F]{2})+$/.test(rawTx)) throw new TxgateError('a signed transaction is 0x-prefixed hex', 'invalid_params');
  return Buffer.from(rawTx.slice(2), 'hex');
}
