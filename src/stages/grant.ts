/**
 * The chain grant stage: the account must have submission enabled (else 403 submission_disabled)
 * and a grant for the host's chain (else 403 chain_not_granted); eth_sendRawTransactionSync
 * needs the grant's `sync` (else 403 sync_not_granted).
 */
import { REJECT } from '../errors.js';
import type { Account, Grant } from '../accounts/types.js';
import type { ChainRuntime } from '../chains.js';
import { enrich, type BaseCtx, type RpcRequest } from '../pipeline/context.js';
import { SYNC_METHOD } from '../sync/sync-send.js';
import type { Stage } from '../pipeline/pipeline.js';

export function createGrantStage(): Stage<
  BaseCtx & { readonly rpc: RpcRequest; readonly account: Account; readonly chain: ChainRuntime },
  { readonly grant: Grant },
  'grant'
> {
  return {
    name: 'grant',
    reasons: ['submission_disabled', 'chain_not_granted', 'sync_not_granted'],
    adds: 'grant',
    run(ctx) {
      if (!ctx.account.submissionEnabled) return REJECT.submission_disabled;
      const grant = ctx.account.grants.get(ctx.chain.chainId);
      if (grant === undefined) return REJECT.chain_not_granted;
      if (!grant.sync && ctx.rpc.method === SYNC_METHOD) return REJECT.sync_not_granted;
      return enrich(ctx, 'grant', grant);
    },
  };
}
