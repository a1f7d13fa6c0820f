/**
 * A status from the chain alone (`source: "chain"`, docs/tracking.md#asking-for-a-status): the
 * chain RPC's receipt of a hash this edge does not track for the account asking, answered alike
 * by the thread that owns the tracker and by any other thread of the process.
 */
import { Exit, reject } from '../base/errors.js';
import { RECEIPT_METHOD } from '../rpc/rpc-methods.js';
import { readReceipt } from './blocks.js';
import type { ChainRpc } from '../upstreams/chain-rpc/chain-rpc.js';
import { CALL_MS } from '../base/rpc-values.js';
import { chainStatus } from './status.js';

/** The chain's receipt of `hash` as a status answer; 503 `chain_unavailable` when it cannot be read. */
export async function chainAnswer(rpc: ChainRpc, chainId: number, hash: string): Promise<Exit> {
  const g = await rpc.one(RECEIPT_METHOD, [hash], { timeoutMs: CALL_MS });
  if (g.kind !== 'result') return reject('chain_unavailable', undefined, { txHash: hash });
  if (g.result === null) return statusExit(chainStatus(hash, chainId, null));
  const r = readReceipt(g.result, hash);
  return r === null
    ? reject('chain_unavailable', 'The chain RPC answered something other than a receipt of this transaction', { txHash: hash })
    : statusExit(chainStatus(hash, chainId, r));
}

/** A status object (JSON text) as the answer's tail. */
export function statusExit(json: string): Exit {
  return new Exit(200, 'ok', ',"result":' + json + '}');
}
