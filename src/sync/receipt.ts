/** The answers of eth_sendRawTransactionSync built from a receipt, or from its absence (EIP-7966). */
import { Exit, reject, safeJson } from '../base/errors.js';

/** A receipt of `hash` as the chain gave it. */
export function isReceiptOf(v: unknown, hash: string): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as { transactionHash?: unknown };
  return typeof r.transactionHash === 'string' && r.transactionHash.toLowerCase() === hash;
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
