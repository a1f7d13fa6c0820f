/**
 * The sync send at the preconfirmation (`chains[].flashblocks`, docs/flashblocks.md): on a chain
 * with the builder's stream, a `receipt`-mode call whose transaction a slice carries, with that
 * slice's receipt of it, is answered then, as flashblock-aware nodes answer
 * `eth_getTransactionReceipt` from the stream before the block is sealed (base/base
 * `crates/flashblocks-rpc`: the block being built's number, a zero `blockHash`). The receipt's
 * own fields are the slice's (`status`, `cumulativeGasUsed`, `logs`, `type`, and the others a
 * builder adds); the edge adds the hash, the block number, the zero block hash and the
 * transaction's place where every slice before it was read. A slice without the transaction's
 * receipt says it is in, not how it ran: such a call waits for the sealed block's receipt.
 */
import { Exit, safeJson } from '../base/errors.js';
import { hexQuantity } from '../base/rpc-values.js';
import type { Preconf } from '../flashblocks/recent.js';
import type { FlashblocksSource } from '../flashblocks/feed.js';

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

/** The sync answer at a preconfirmation: 200, `result` that receipt; null where it gives none. */
export function preconfirmedAnswer(p: Preconf): { exit: Exit; receipt: Record<string, unknown> } | null {
  const receipt = preconfirmedReceipt(p);
  const json = receipt === null ? undefined : safeJson(receipt);
  return json === undefined || receipt === null ? null : { exit: new Exit(200, 'ok', ',"result":' + json + '}'), receipt };
}

/**
 * One call's wait for its preconfirmation: armed before the send (a slice may come before the
 * sequencer's answer), `answer` resolves with the receipt once a slice carries the
 * transaction with one (never, else); `stop` lets go of it.
 */
export class PreconfWait {
  readonly answer: Promise<{ exit: Exit; receipt: Record<string, unknown> }>;
  private readonly cancel: () => void;

  constructor(source: FlashblocksSource, hash: string) {
    let resolve!: (v: { exit: Exit; receipt: Record<string, unknown> }) => void;
    this.answer = new Promise((r) => (resolve = r));
    this.cancel = source.waitFor(hash, (p) => {
      const a = preconfirmedAnswer(p);
      if (a !== null) resolve(a);
    });
  }

  stop(): void {
    this.cancel();
  }
}
