/** The answers of eth_sendRawTransactionSync built from a receipt, or from its absence (EIP-7966). */
import { Exit, reject } from '../errors.js';

/** A receipt of `hash` as the chain gave it. */
export function isReceiptOf(v: unknown, hash: string): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as { transactionHash?: unknown };
  return typeof r.transactionHash === 'string' && r.transactionHash.toLowerCase() === hash;
}

/** Executed: 200, `result` the receipt as the chain gave it (status 0x1 or 0x0). */
export const executedAnswer = (receipt: unknown): Exit => new Exit(200, 'ok', ',"result":' + JSON.stringify(receipt) + '}');

/** Accepted without a receipt within the wait: EIP-7966's code 4, with the hash. */
export const pendingAnswer = (hash: string): Exit => reject('sync_timeout', undefined, { txHash: hash });
