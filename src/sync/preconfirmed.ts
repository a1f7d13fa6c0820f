/**
 * The sync send at the preconfirmation (docs/flashblocks.md#the-sync-send-at-the-preconfirmation): a slice's
 * receipt of the transaction answers (as base/base `crates/flashblocks-rpc` gives it); without one, the sealed block.
 */
import { hexQuantity } from '../base/rpc-values.js';
import type { Preconf } from '../flashblocks/recent.js';
import type { FlashblocksSource } from '../flashblocks/feed.js';
import { executedAnswer, type Receipted } from './receipt.js';

/** What flashblock-aware nodes put where the sealed block's hash will be. */
export const ZERO_HASH = '0x' + '0'.repeat(64);

/** The receipt fields taken from a slice as they are (any other it carries is left out: the edge's own go beside them). */
const TAKEN = ['type', 'status', 'cumulativeGasUsed', 'logs', 'logsBloom', 'gasUsed', 'effectiveGasPrice', 'from', 'to', 'contractAddress'];

/** The receipt a preconfirmation gives (a JSON object), or null: the slice carries no receipt of it with a status. */
export function preconfirmedReceipt(p: Preconf): Record<string, unknown> | null {
  const r = p.receipt;
  if (r === null || r.status === null) return null;
  const out: Record<string, unknown> = {
    transactionHash: p.hash,
    blockHash: ZERO_HASH,
    blockNumber: hexQuantity(p.number),
    transactionIndex: p.position === null ? null : hexQuantity(p.position),
  };
  for (const k of TAKEN) if (Object.hasOwn(r.fields, k)) out[k] = r.fields[k];
  out.status = r.status === 1 ? '0x1' : '0x0';
  return out;
}

/** One call's wait for its preconfirmation: `answer` resolves once a slice carries the transaction with its receipt (never, else). */
export interface PreconfWait {
  readonly answer: Promise<Receipted>;
  /** Lets go of the wait. */
  readonly stop: () => void;
}

/** Armed before the send: a slice may come before the sequencer's answer. */
export function preconfWait(source: FlashblocksSource, hash: string): PreconfWait {
  let stop!: () => void;
  const answer = new Promise<Receipted>((resolve) => {
    stop = source.waitFor(hash, (p) => {
      const receipt = preconfirmedReceipt(p);
      const exit = receipt === null ? null : executedAnswer(receipt);
      if (receipt !== null && exit !== null) resolve({ exit, receipt });
    });
  });
  return { answer, stop };
}
