/**
 * The status object: what `txgate_getTransactionStatus` answers and a `transactionStatus`
 * subscription pushes, built by one function from an entry (source `edge`: this edge accepted
 * it), or from the chain's receipt (source `chain`: a hash this edge did not accept for the
 * account asking). Times are Unix epoch milliseconds; the block's `timestamp` is the chain's
 * (seconds). docs/tracking.md describes each field.
 */
import type { Receipt } from './blocks.js';
import { isFinal, type StatusName } from './states.js';
import type { Entry } from './table.js';

/** An entry as a status object (JSON text). */
export function entryStatus(e: Entry, chainId: number): string {
  const at = (e.state === 'included' || e.state === 'reverted') && e.at?.kind === 'block' ? e.at : null;
  const block = at === null ? null : { number: at.number, hash: at.hash, index: at.index, timestamp: at.time, seenAt: at.seenAt };
  const replaced = e.state === 'replaced' && e.at?.kind === 'replacement' ? e.at : null;
  const pre = e.state === 'preconfirmed' && e.at?.kind === 'preconfirmed' ? e.at : null;
  return JSON.stringify({
    hash: e.hash,
    status: e.state,
    final: isFinal(e.state),
    source: 'edge',
    chainId,
    version: e.version,
    receivedAt: e.receivedAt,
    acceptedAt: e.acceptedAt,
    sequencer: e.sequencer,
    rule: e.rule,
    block,
    flashblock:
      pre === null ? null : { number: pre.number, index: pre.index, status: pre.status === null ? null : pre.status === 1 ? '0x1' : '0x0', seenAt: pre.seenAt },
    gasUsed: at === null ? null : at.gasUsed,
    inclusionMs: at === null ? null : Math.max(0, at.seenAt - e.acceptedAt),
    replacedBy: replaced?.by ?? null,
    replacedIn: replaced === null ? null : { number: replaced.number, hash: replaced.hash },
    reorgs: e.reorgs,
    expiredBy: e.state === 'expired' ? e.expiredBy : null,
    updatedAt: e.updatedAt,
  });
}

/** What the chain alone says of a hash (JSON text): its receipt, or unknown. */
export function chainStatus(hash: string, chainId: number, r: Receipt | null): string {
  const status: StatusName = r === null ? 'unknown' : r.ok ? 'included' : 'reverted';
  return JSON.stringify({
    hash,
    status,
    final: isFinal(status),
    source: 'chain',
    chainId,
    block: r === null ? null : { number: r.blockNumber, hash: r.blockHash, index: r.index },
    gasUsed: r === null ? null : r.gasUsed,
  });
}
