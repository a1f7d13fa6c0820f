/** A sync call's receipt (EIP-7966): asking for it, and the answers built from it or from its absence. */
import { Exit, reject, safeJson } from '../base/errors.js';
import { RECEIPT_METHOD } from '../rpc/rpc-methods.js';
import type { Answer, Upstream } from '../upstreams/upstream.js';

/** The fields of a receipt (as the chain gave it: text from outside) that the `sync receipt` lines and the audit detail say. */
export type ReceiptFields = { readonly status?: unknown; readonly blockNumber?: unknown };

/** A receipt and the answer it gives. */
export interface Receipted {
  readonly exit: Exit;
  readonly receipt: ReceiptFields;
}

/**
 * Executed: 200, `result` the receipt as the chain gave it (status 0x1 or 0x0); null for a
 * receipt that cannot be written again (nested past the serializer's depth: no real receipt is).
 */
export function executedAnswer(receipt: unknown): Exit | null {
  const json = safeJson(receipt);
  return json === undefined ? null : new Exit(200, 'ok', ',"result":' + json + '}');
}

/** Accepted without a receipt within the wait: EIP-7966's code 4, with the hash. */
export const pendingAnswer = (hash: string): Exit => reject('sync_timeout', undefined, { txHash: hash });

/** The receipt of `hash` in an answer, as the chain gave it, with the answer it gives; null: anything else. */
export function receiptIn(a: Answer, hash: string): Receipted | null {
  if (a.kind !== 'result' || typeof a.result !== 'object' || a.result === null) return null;
  const receipt = a.result as ReceiptFields & { transactionHash?: unknown };
  if (typeof receipt.transactionHash !== 'string' || receipt.transactionHash.toLowerCase() !== hash) return null;
  const exit = executedAnswer(receipt);
  return exit === null ? null : { exit, receipt };
}

/** Asks `at` once for the receipt of `hash` within `leftMs` (at most one forward timeout); null: none yet, an error, a fault. */
export async function askReceipt(at: Upstream, hash: string, leftMs: number, forward: { timeoutMs: number; queueMs: number }): Promise<Receipted | null> {
  const times = { timeoutMs: Math.max(1, Math.min(leftMs, forward.timeoutMs)), queueMs: Math.max(1, Math.min(leftMs, forward.queueMs)) };
  return receiptIn(await at.call(RECEIPT_METHOD, `["${hash}"]`, times), hash);
}
