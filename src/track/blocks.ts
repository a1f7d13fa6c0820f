/**
 * What the watcher reads from the chain RPC, checked: a block's header and transaction hashes,
 * a receipt, a transaction. The chain RPC may answer anything; what is not the shape asked for
 * (or not the block, receipt or transaction asked for) is null, and the watcher treats it as no
 * answer (it asks again later), never as a fact.
 */
import { address, hash32, quantity } from '../base/rpc-values.js';

/** A block with 1,000,000 transactions is no block a chain makes: refused as a lie. */
const MAX_BLOCK_TXS = 1_000_000;

export interface Block {
  readonly number: number;
  readonly hash: string;
  readonly parent: string;
  /** The block's timestamp (seconds). */
  readonly time: number;
  /** Its transactions' hashes as the chain gave them (strings; matched as they are). */
  readonly txs: readonly unknown[];
}

/** eth_getBlockByNumber(n, false) read, or null when it is not block `n`. */
export function readBlock(v: unknown, n: number): Block | null {
  if (typeof v !== 'object' || v === null) return null;
  const b = v as { number?: unknown; hash?: unknown; parentHash?: unknown; timestamp?: unknown; transactions?: unknown };
  const number = quantity(b.number);
  const hash = hash32(b.hash);
  const parent = hash32(b.parentHash);
  const time = quantity(b.timestamp);
  if (number !== n || hash === null || parent === null || time === null) return null;
  if (!Array.isArray(b.transactions) || b.transactions.length > MAX_BLOCK_TXS) return null;
  return { number, hash, parent, time, txs: b.transactions };
}

export interface Receipt {
  readonly ok: boolean;
  readonly blockNumber: number;
  readonly blockHash: string;
  readonly index: number;
  readonly gasUsed: number;
  readonly from: string | null;
}

/** eth_getTransactionReceipt read, or null when it is not a receipt of `hash`. */
export function readReceipt(v: unknown, hash: string): Receipt | null {
  if (typeof v !== 'object' || v === null) return null;
  const r = v as Record<string, unknown>;
  if (hash32(r.transactionHash) !== hash) return null;
  const blockNumber = quantity(r.blockNumber);
  const blockHash = hash32(r.blockHash);
  const index = quantity(r.transactionIndex);
  const gasUsed = quantity(r.gasUsed);
  if (blockNumber === null || blockHash === null || index === null || gasUsed === null) return null;
  if (r.status !== '0x1' && r.status !== '0x0' && r.status !== '0x01' && r.status !== '0x00') return null;
  return { ok: r.status === '0x1' || r.status === '0x01', blockNumber, blockHash, index, gasUsed, from: address(r.from) };
}

export interface Seen {
  readonly from: string | null;
  readonly nonce: number | null;
  /** The block it is in, or null while in the pool. */
  readonly blockNumber: number | null;
}

/** eth_getTransactionByHash read: `null` (the chain does not know it), the transaction, or undefined (not an answer about `hash`). */
export function readSeen(v: unknown, hash: string): Seen | null | undefined {
  if (v === null) return null;
  if (typeof v !== 'object') return undefined;
  const t = v as Record<string, unknown>;
  if (hash32(t.hash) !== hash) return undefined;
  return {
    from: address(t.from),
    nonce: quantity(t.nonce),
    blockNumber: t.blockNumber === null || t.blockNumber === undefined ? null : quantity(t.blockNumber),
  };
}

/** In a block fetched with its transactions: the hash of the one from `sender` with `nonce`, or null. */
export function findByNonce(v: unknown, sender: string, nonce: number): string | null {
  if (typeof v !== 'object' || v === null) return null;
  const txs = (v as { transactions?: unknown }).transactions;
  if (!Array.isArray(txs)) return null;
  for (const t of txs) {
    if (typeof t !== 'object' || t === null) continue;
    const o = t as Record<string, unknown>;
    if (address(o.from) === sender && quantity(o.nonce) === nonce) return hash32(o.hash);
  }
  return null;
}
