/**
 * A refusal as the viem and ethers adapters report it: txgate's JSON-RPC error (its `data.reason`)
 * read against the outcome table (outcomes.ts), with one sentence that names the reason and what
 * the client does next. Both adapters' errors (errors-viem.ts, errors-ethers.ts) are made from
 * this one description, so their messages and fields say the same thing.
 */
import { OUTCOMES, type OutcomeKind, type OutcomeReason, type OutcomeRow } from './outcomes.js';
import { TLS_CAUSES, type TlsCause } from './tls-cause.js';

/** The JSON-RPC error object an adapter holds (txgate's, or the one `rpcError` made of an outcome). */
export interface RpcErrorObject {
  readonly code: number;
  readonly message?: string | undefined;
  readonly data?: unknown;
}

export interface Refused {
  /** txgate's `data.reason` (or the kit's own: `unreachable`, `uncertain`, `unexpected_answer`). */
  readonly reason: OutcomeReason;
  readonly outcome: OutcomeKind;
  /** The HTTP status the reason is answered with (`data.status` over the WebSocket transport). */
  readonly status: number;
  /** The JSON-RPC code of the error. */
  readonly rpcCode: number;
  /** The error's own message (txgate's, or the sequencer's for `upstream_rejected`). */
  readonly detail: string;
  /** Names the reason and the action: the adapters' short message. */
  readonly shortMessage: string;
  readonly txHash?: string;
  readonly retryAfterMs?: number;
  /** txgate could not be reached over TLS: why (tls-cause.ts; the kit's `data.tls`). */
  readonly tls?: TlsCause;
}

/** What the client does next, by outcome: the README's retry table in one sentence each. */
export const ACTIONS: Readonly<Record<OutcomeKind, string>> = {
  rejected: 'final for these bytes: fix what the reason names before sending again',
  rate_limited: 'not sent: resend the same bytes after the wait',
  not_forwarded: 'not sent, nothing reached a sequencer: resend the same bytes after a backoff',
  uncertain: 'it may have reached a sequencer: look up the receipt of its hash, resend only the same bytes',
  pending: 'accepted, no receipt yet: look up the receipt of its hash, never send other bytes for it',
};

/** The kit's own reason for a call that got no JSON-RPC answer: not written, written and unanswered, or answered with something not txgate's. */
export function failedReason(a: { readonly sent: boolean; readonly status?: number | undefined }): 'unreachable' | 'uncertain' | 'unexpected_answer' {
  return a.status !== undefined ? 'unexpected_answer' : a.sent ? 'uncertain' : 'unreachable';
}

/**
 * The JSON-RPC error an adapter raises for a call that got no JSON-RPC answer: the kit's reason,
 * and where the TLS handshake failed, its cause in `data.tls` (tls-cause.ts) and in the message.
 */
export function failedError(a: { readonly why: string; readonly sent: boolean; readonly status?: number | undefined; readonly tls?: string | undefined }): {
  readonly code: number;
  readonly message: string;
  readonly data: { readonly reason: string; readonly tls?: string };
  readonly status?: number | undefined;
} {
  return { code: -32603, message: a.why, data: { reason: failedReason(a), ...(a.tls !== undefined ? { tls: a.tls } : {}) }, status: a.status };
}

/** The description of a JSON-RPC error that carries a reason the outcome table knows, else null (not txgate's). */
export function describeRefusal(e: RpcErrorObject): Refused | null {
  const data = (typeof e.data === 'object' && e.data !== null ? e.data : {}) as {
    reason?: unknown;
    txHash?: unknown;
    retryAfterMs?: unknown;
    status?: unknown;
    tls?: unknown;
  };
  if (typeof data.reason !== 'string' || !Object.hasOwn(OUTCOMES, data.reason)) return null;
  const reason = data.reason as OutcomeReason;
  const row: OutcomeRow = OUTCOMES[reason];
  const status = typeof data.status === 'number' ? data.status : row.status;
  const txHash = typeof data.txHash === 'string' ? data.txHash : undefined;
  const retryAfterMs = typeof data.retryAfterMs === 'number' ? data.retryAfterMs : undefined;
  const detail = String(e.message ?? '');
  const tls = typeof data.tls === 'string' && Object.hasOwn(TLS_CAUSES, data.tls) ? (data.tls as TlsCause) : undefined;
  const action = row.kind === 'rate_limited' && retryAfterMs !== undefined ? `not sent: resend the same bytes after ${retryAfterMs} ms` : ACTIONS[row.kind];
  const shortMessage = `txgate ${reason} (${row.kind}, HTTP ${status}): ${detail.replace(/\.$/, '')}; ${action}${txHash !== undefined && !detail.includes(txHash) ? ` (${txHash})` : ''}.`;
  return {
    reason,
    outcome: row.kind,
    status,
    rpcCode: e.code,
    detail,
    shortMessage,
    ...(txHash !== undefined ? { txHash } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(tls !== undefined ? { tls } : {}),
  };
}
