/**
 * The chain's head as the conditions stage reads it (docs/conditional.md#what-the-edge-checks-itself), and the one rule
 * it applies: a `blockNumberMax` below the head's number, or a `timestampMax` below the head's
 * timestamp, can never be met again (every later block is higher and no earlier), so such a
 * submission is refused at once, nothing sent. Only a fresh head refuses: one seen more than
 * `headMaxAgeMs` ago (or none, or a chain without `rpc` and `rpcWs`) refuses nothing, and the
 * sequencer decides.
 *
 * The head comes through a narrow view (`HeadView`), so where it is read from is the
 * composition root's choice: the chain's one head source (upstreams/chain-rpc/chain-heads.ts:
 * the `rpcWs` subscription's heads, else the chain RPC's latest block polled every
 * `headPollMs`). Its number and timestamp are safe integers (base/rpc-values.ts): a head beyond
 * 2^53 is never kept, and so refuses nothing.
 */
import { type Exit, reject } from '../base/errors.js';
import type { Head } from '../upstreams/chain-rpc/chain-heads.js';
import type { Conditions } from './options.js';

/** Where the chain's head is read from: the latest one seen (`seenAt`: performance.now()), or null before any. */
export interface HeadView {
  head(): Head | null;
}

/** The refusal of conditions the fresh head has passed, or null (forward them). `now`: performance.now(). */
export function passedBound(c: Conditions, head: Head | null, maxAgeMs: number, now: number): Exit | null {
  if (head === null || now - head.seenAt > maxAgeMs) return null;
  if (c.blockNumberMax !== null && BigInt(head.number) > c.blockNumberMax)
    return reject('conditions_expired', `Transaction rejected: the chain's head ${head.number} is past blockNumberMax ${c.blockNumberMax}`, {
      bound: 'blockNumberMax',
      head: `0x${head.number.toString(16)}`,
    });
  if (c.timestampMax !== null && BigInt(head.timestamp) > c.timestampMax)
    return reject('conditions_expired', `Transaction rejected: the chain's head timestamp ${head.timestamp} is past timestampMax ${c.timestampMax}`, {
      bound: 'timestampMax',
      head: `0x${head.number.toString(16)}`,
    });
  return null;
}
