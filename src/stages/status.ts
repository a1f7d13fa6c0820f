/**
 * The status query stage: `txgate_getTransactionStatus` (docs/tracking.md#asking-for-a-status)
 * on a chain that tracks, answered here, after the grant: the route stage names the hash asked
 * for (its own field, `statusOf`), the account is authenticated and granted as a submission would
 * be, and the chain's tracker answers for that account. Every other request passes on untouched.
 * Over HTTP and the WebSocket transport alike (one pipeline).
 */
import type { Exit } from '../base/errors.js';
import type { Account } from '../accounts/types.js';
import type { ChainRuntime } from '../config/chains.js';
import type { BaseCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';

/** A tracked chain's status answers (src/track/tracker.ts's Tracker, built in the composition root). */
export interface StatusAnswers {
  status(account: string, hash: string): Exit | Promise<Exit>;
}

export function createStatusStage(
  /** By chain id, the chains that track (the route stage names a status query only there). */
  trackers: ReadonlyMap<number, StatusAnswers> = new Map(),
): Stage<BaseCtx & { readonly statusOf?: string | undefined; readonly account: Account; readonly chain: ChainRuntime }, object, 'status'> {
  return {
    name: 'status',
    about: '`txgate_getTransactionStatus` on a tracked chain: answered here, for the account asking, once granted',
    reasons: ['ok', 'chain_unavailable'],
    adds: null,
    run(ctx) {
      const hash = ctx.statusOf;
      return hash === undefined ? ctx : trackers.get(ctx.chain.chainId)!.status(ctx.account.id, hash);
    },
  };
}
