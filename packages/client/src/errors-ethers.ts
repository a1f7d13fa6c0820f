/**
 * txgate's refusals as ethers errors: the code an ethers program already handles where one fits
 * (`INSUFFICIENT_FUNDS`, `NONCE_EXPIRED`, `REPLACEMENT_UNDERPRICED` from the sequencer's own
 * refusal, `INVALID_ARGUMENT` for bytes that are not an acceptable transaction, `TIMEOUT` where
 * the outcome is not known yet, `SERVER_ERROR` with the HTTP status for what the service
 * answered about the request, the key or its limits), and txgate's reason on the error itself:
 * `error.reason`, `error.status`, `error.outcome`, and `error.error` (the JSON-RPC error, whose
 * `data.reason` `txgateReason` reads). docs/clients.md "Reasons in viem and ethers" is
 * rendered from ETHERS_CODES.
 */
import { makeError, type ErrorCode, type EthersError } from 'ethers';
import type { OutcomeReason } from './outcomes.js';
import { describeRefusal, type RpcErrorObject } from './refusal.js';

/** The ethers code of each reason; `upstream_rejected` goes by the sequencer's message (SEQUENCER_CODES). */
export const ETHERS_CODES: Readonly<Record<OutcomeReason, ErrorCode>> = {
  not_found: 'SERVER_ERROR',
  method_not_allowed: 'SERVER_ERROR',
  bad_framing: 'SERVER_ERROR',
  duplicate_header: 'SERVER_ERROR',
  websocket_version: 'SERVER_ERROR',
  misdirected_host: 'SERVER_ERROR',
  payload_too_large: 'SERVER_ERROR',
  unsupported_content_type: 'SERVER_ERROR',
  parse_error: 'SERVER_ERROR',
  invalid_request: 'SERVER_ERROR',
  batch_not_supported: 'SERVER_ERROR',
  method_not_found: 'UNSUPPORTED_OPERATION',
  invalid_params: 'INVALID_ARGUMENT',
  credentials_stale: 'SERVER_ERROR',
  unauthorized: 'SERVER_ERROR',
  submission_disabled: 'SERVER_ERROR',
  chain_not_granted: 'SERVER_ERROR',
  solana_transaction: 'INVALID_ARGUMENT',
  unsigned_transaction: 'INVALID_ARGUMENT',
  replay_unprotected: 'UNSUPPORTED_OPERATION',
  unsupported_tx_type: 'UNSUPPORTED_OPERATION',
  chain_mismatch: 'INVALID_ARGUMENT',
  invalid_signature: 'INVALID_ARGUMENT',
  invalid_transaction: 'INVALID_ARGUMENT',
  fee_rejected: 'SERVER_ERROR',
  sender_not_allowed: 'SERVER_ERROR',
  sync_not_granted: 'SERVER_ERROR',
  conditional_not_granted: 'SERVER_ERROR',
  conditions_too_costly: 'INVALID_ARGUMENT',
  conditions_expired: 'UNKNOWN_ERROR',
  sync_timeout: 'TIMEOUT',
  rate_limited: 'SERVER_ERROR',
  upstream_rejected: 'UNKNOWN_ERROR',
  upstream_error: 'TIMEOUT',
  upstream_unavailable: 'SERVER_ERROR',
  overloaded: 'SERVER_ERROR',
  too_many_connections: 'SERVER_ERROR',
  draining: 'SERVER_ERROR',
  not_ready: 'SERVER_ERROR',
  client_closed: 'SERVER_ERROR',
  internal_error: 'SERVER_ERROR',
  unreachable: 'NETWORK_ERROR',
  uncertain: 'TIMEOUT',
  unexpected_answer: 'BAD_DATA',
};

/** The sequencer's refusal (`upstream_rejected`) by its message, as ethers reads a node's: first match wins, else UNKNOWN_ERROR. */
export const SEQUENCER_CODES: readonly { readonly pattern: RegExp; readonly code: ErrorCode; readonly says: string }[] = [
  { pattern: /insufficient funds|base fee exceeds gas limit/i, code: 'INSUFFICIENT_FUNDS', says: '"insufficient funds"' },
  { pattern: /nonce.*too low|nonce has already been used/i, code: 'NONCE_EXPIRED', says: '"nonce too low"' },
  { pattern: /replacement transaction.*underpriced|replacement fee too low/i, code: 'REPLACEMENT_UNDERPRICED', says: '"replacement transaction underpriced"' },
];

const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK',
  202: 'Accepted',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  421: 'Misdirected Request',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** The ethers code a reason is reported with (the sequencer's message decides for `upstream_rejected`). */
export function ethersCodeOf(reason: OutcomeReason, message: string): ErrorCode {
  if (reason !== 'upstream_rejected') return ETHERS_CODES[reason];
  return SEQUENCER_CODES.find((s) => s.pattern.test(message))?.code ?? ETHERS_CODES.upstream_rejected;
}

/**
 * The ethers error for txgate's JSON-RPC error answering `payload`, or null when the error carries
 * no reason txgate gives (then ethers' own reading applies).
 */
export function ethersErrorOf(payload: { method: string; params?: unknown }, error: RpcErrorObject): EthersError | null {
  const r = describeRefusal(error);
  if (r === null) return null;
  const code = ethersCodeOf(r.reason, r.detail);
  const params = Array.isArray(payload.params) ? payload.params : [];
  const transaction = payload.method.startsWith('eth_sendRawTransaction') ? params[0] : undefined;
  const info = {
    reason: r.reason,
    outcome: r.outcome,
    status: r.status,
    error: { code: error.code, message: error.message, data: error.data },
    info: { payload, responseStatus: `${r.status} ${STATUS_TEXT[r.status] ?? ''}`.trim() },
    ...(transaction !== undefined ? { transaction } : {}),
    ...(code === 'TIMEOUT' || code === 'UNSUPPORTED_OPERATION' ? { operation: payload.method } : {}),
    ...(code === 'INVALID_ARGUMENT' ? { argument: 'signedTransaction', value: transaction } : {}),
    ...(r.txHash !== undefined ? { txHash: r.txHash } : {}),
    ...(r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {}),
    ...(r.tls !== undefined ? { tls: r.tls } : {}),
  };
  return makeError(r.shortMessage, code, info as never) as EthersError;
}
