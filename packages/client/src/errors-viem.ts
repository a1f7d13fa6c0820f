/**
 * txgate's refusals as viem errors: a `BaseError` subclass per outcome, whose `shortMessage`
 * names the reason and what to do next, with `docsPath` to the reasons table, txgate's reason
 * and status on the error (`reason`, `outcome`, `status`, `rpcCode`, `txHash`, `retryAfterMs`) and
 * the JSON-RPC error as its `cause` (an `RpcRequestError` with `data.reason`, which
 * `txgateReason` reads). The error has no `code` of its own: viem would turn a JSON-RPC code
 * into its generic class ("Transaction creation failed."). docs/clients.md "Reasons in viem and
 * ethers" is rendered from VIEM_ERRORS.
 */
import { BaseError, RpcRequestError } from 'viem';
import type { OutcomeKind } from './outcomes.js';
import { describeRefusal, type Refused, type RpcErrorObject } from './refusal.js';
import type { TlsCause } from './tls-cause.js';

/** Where the reasons table is, in txgate's repository (viem prints it as the error's `Docs:` line). */
export const VIEM_DOCS = { docsBaseUrl: '', docsPath: 'docs/clients.md', docsSlug: 'reasons-in-viem-and-ethers' } as const;

/** Every txgate refusal in viem: `error.reason` is txgate's `data.reason`. */
export class TxgateRpcError extends BaseError {
  readonly reason: string;
  readonly outcome: OutcomeKind;
  readonly status: number;
  readonly rpcCode: number;
  readonly txHash: string | undefined;
  readonly retryAfterMs: number | undefined;
  /** txgate could not be reached over TLS: why (`certificate_untrusted`, `certificate_expired`, `hostname_mismatch`, `tls_protocol`). */
  readonly tls: TlsCause | undefined;

  constructor(r: Refused, cause: RpcRequestError, name: string) {
    super(r.shortMessage, { cause, ...VIEM_DOCS, name, details: r.detail });
    this.reason = r.reason;
    this.outcome = r.outcome;
    this.status = r.status;
    this.rpcCode = r.rpcCode;
    this.txHash = r.txHash;
    this.retryAfterMs = r.retryAfterMs;
    this.tls = r.tls;
  }
}

/** Final for these bytes (a 4xx, or the sequencer's refusal). */
export class TxgateRejectedError extends TxgateRpcError {}
/** 429: resend the same bytes after `retryAfterMs`. */
export class TxgateRateLimitedError extends TxgateRpcError {}
/** Nothing reached a sequencer: resend the same bytes after a backoff. */
export class TxgateNotSentError extends TxgateRpcError {}
/** It may have reached a sequencer: the receipt of `txHash` decides. */
export class TxgateUncertainError extends TxgateRpcError {}
/** Accepted, no receipt within the sync send's wait: look up `txHash`. */
export class TxgatePendingError extends TxgateRpcError {}

/** The viem error class of each outcome, by name. */
export const VIEM_ERRORS: Readonly<
  Record<OutcomeKind, { readonly name: string; readonly make: new (r: Refused, c: RpcRequestError, n: string) => TxgateRpcError }>
> = {
  rejected: { name: 'TxgateRejectedError', make: TxgateRejectedError },
  rate_limited: { name: 'TxgateRateLimitedError', make: TxgateRateLimitedError },
  not_forwarded: { name: 'TxgateNotSentError', make: TxgateNotSentError },
  uncertain: { name: 'TxgateUncertainError', make: TxgateUncertainError },
  pending: { name: 'TxgatePendingError', make: TxgatePendingError },
};

/**
 * The viem error for a JSON-RPC error from txgate answering `method`: a TxgateRpcError where the
 * error carries a reason the outcome table knows, else the RpcRequestError viem itself would make.
 */
export function viemErrorOf(url: string, method: string, params: unknown[], e: RpcErrorObject & { status?: number | undefined }): BaseError {
  const cause = new RpcRequestError({
    body: { method, params },
    error: { code: e.code, message: e.message ?? '', data: e.data },
    url,
    ...(e.status !== undefined ? { status: e.status } : {}),
  });
  const data = e.data as Record<string, unknown> | undefined;
  const r = describeRefusal(e.status !== undefined && typeof data === 'object' && data !== null ? { ...e, data: { status: e.status, ...data } } : e);
  if (r === null) return cause;
  const kind = VIEM_ERRORS[r.outcome];
  return new kind.make(r, cause, kind.name);
}
