/**
 * The client's one outcome table: every `data.reason` the kit can meet (txgate's reasons table)
 * or produce itself, with what it means for the submission (its kind: whether resending the
 * same bytes can change anything) and the JSON-RPC code and HTTP status an adapter reports it
 * with. The kit classifies by `data.reason`, the HTTP status only where an answer has none; the
 * viem and ethers adapters turn an outcome into an error with `rpcError`. A test keeps the table
 * in step with the server's reasons.
 */

/** What an answer means for the submission. */
export type OutcomeKind =
  /** Refused for a reason resending the same bytes will not change. */
  | 'rejected'
  /** 429: the same bytes may go again after the wait. */
  | 'rate_limited'
  /** Definitely not forwarded: safe to resend. */
  | 'not_forwarded'
  /** It may or may not have reached a sequencer: the receipt of the hash decides. */
  | 'uncertain'
  /** Accepted by the sequencer, no receipt yet (eth_sendRawTransactionSync's wait ran out). */
  | 'pending';

export interface OutcomeRow {
  readonly kind: OutcomeKind;
  readonly status: number;
  readonly code: number;
  /** Produced by the client itself, never by txgate. */
  readonly client?: true;
}

const row = (kind: OutcomeKind, status: number, code: number, client?: true): OutcomeRow => (client ? { kind, status, code, client } : { kind, status, code });

export const OUTCOMES = {
  // txgate's reasons (its README "Errors" table)
  not_found: row('rejected', 404, -32601),
  method_not_allowed: row('rejected', 405, -32600),
  bad_framing: row('rejected', 400, -32600),
  duplicate_header: row('rejected', 400, -32600),
  websocket_version: row('rejected', 426, -32600),
  misdirected_host: row('rejected', 421, -32600),
  payload_too_large: row('rejected', 413, -32600),
  unsupported_content_type: row('rejected', 400, -32600),
  parse_error: row('rejected', 400, -32700),
  invalid_request: row('rejected', 400, -32600),
  batch_not_supported: row('rejected', 400, -32600),
  method_not_found: row('rejected', 400, -32601),
  invalid_params: row('rejected', 400, -32602),
  credentials_stale: row('not_forwarded', 503, -32002),
  unauthorized: row('rejected', 401, -32000),
  submission_disabled: row('rejected', 403, -32003),
  chain_not_granted: row('rejected', 403, -32003),
  solana_transaction: row('rejected', 400, -32000),
  unsigned_transaction: row('rejected', 400, -32000),
  replay_unprotected: row('rejected', 400, -32000),
  unsupported_tx_type: row('rejected', 400, -32000),
  chain_mismatch: row('rejected', 400, -32000),
  invalid_signature: row('rejected', 400, -32000),
  invalid_transaction: row('rejected', 400, -32000),
  fee_rejected: row('rejected', 402, -32003),
  sender_not_allowed: row('rejected', 403, -32003),
  sync_not_granted: row('rejected', 403, -32003),
  conditional_not_granted: row('rejected', 403, -32003),
  conditions_too_costly: row('rejected', 400, -32005),
  conditions_expired: row('rejected', 400, -32003),
  sync_timeout: row('pending', 202, 4),
  rate_limited: row('rate_limited', 429, -32005),
  upstream_rejected: row('rejected', 200, -32003),
  upstream_error: row('uncertain', 502, -32603),
  upstream_unavailable: row('not_forwarded', 503, -32002),
  overloaded: row('not_forwarded', 503, -32005),
  too_many_connections: row('rate_limited', 429, -32005),
  draining: row('not_forwarded', 503, -32002),
  not_ready: row('not_forwarded', 503, -32002),
  client_closed: row('not_forwarded', 499, -32603),
  internal_error: row('uncertain', 500, -32603),
  // the client's own
  /** No connection to txgate could be made (nothing was written): not forwarded. */
  unreachable: row('not_forwarded', 503, -32002, true),
  /** The request was written and no answer came (timeout, connection lost), or the answer was not the hash. */
  uncertain: row('uncertain', 502, -32603, true),
  /** An answer that is not txgate's (no JSON-RPC body, or no `data.reason`): classified by its HTTP status. */
  unexpected_answer: row('uncertain', 502, -32603, true),
} as const satisfies Record<string, OutcomeRow>;

export type OutcomeReason = keyof typeof OUTCOMES;

/** Statuses whose answer was decided before or without the sequencer (the fall-back for an answer without a known reason). */
const DETERMINISTIC = new Set([200, 400, 401, 402, 403, 404, 405, 413, 421, 426]);

/** The kind of an answer: by its `data.reason` where the table knows it, else by its HTTP status. */
export function kindOf(reason: string | undefined, status: number): OutcomeKind {
  const r = reason === undefined ? undefined : (OUTCOMES as Record<string, OutcomeRow>)[reason];
  if (r !== undefined && r.client !== true) return r.kind;
  if (DETERMINISTIC.has(status)) return 'rejected';
  if (status === 429) return 'rate_limited';
  if (status === 503) return 'not_forwarded';
  if (status === 202) return 'pending';
  return 'uncertain';
}

/** What the adapters need of an outcome (submission.ts SubmitOutcome, but accepted). */
export type Refusal =
  | { readonly kind: 'rejected'; readonly reason: string; readonly code: number; readonly message: string; readonly status: number }
  | { readonly kind: 'rate_limited'; readonly retryAfterMs: number }
  | { readonly kind: 'not_forwarded'; readonly reason: string }
  | { readonly kind: 'uncertain'; readonly hash: string; readonly why: string };

/** The JSON-RPC error (and HTTP status) an adapter reports a refusal with: one mapping for viem and ethers. */
export function rpcError(out: Refusal): { code: number; message: string; data: Record<string, unknown>; status: number } {
  switch (out.kind) {
    case 'rejected':
      return { code: out.code, message: out.message, data: { reason: out.reason }, status: out.status };
    case 'rate_limited':
      return {
        code: OUTCOMES.rate_limited.code,
        message: `rate limited: retry after ${out.retryAfterMs} ms`,
        data: { reason: 'rate_limited', retryAfterMs: out.retryAfterMs },
        status: OUTCOMES.rate_limited.status,
      };
    case 'not_forwarded': {
      const r = (OUTCOMES as Record<string, OutcomeRow>)[out.reason] ?? OUTCOMES.unreachable;
      return { code: r.code, message: 'not forwarded: safe to resend', data: { reason: out.reason }, status: r.status };
    }
    case 'uncertain':
      return {
        code: OUTCOMES.uncertain.code,
        message: `outcome uncertain (${out.why}): check the receipt of ${out.hash}`,
        data: { reason: 'uncertain', txHash: out.hash },
        status: OUTCOMES.uncertain.status,
      };
  }
}
