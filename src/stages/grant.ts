/**
 * The chain grant stage: the account must have submission enabled (else 403 submission_disabled)
 * and a grant for the host's chain (else 403 chain_not_granted).
 */
import { REJECT } from '../errors.js';
import type { Account, Grant } from '../accounts/types.js';
import type { ChainRuntime } from '../chains.js';
import { enrich, type BaseCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';

export function createGrantStage(): Stage<BaseCtx & { readonly account: Account; readonly chain: ChainRuntime }, { readonly grant: Grant }, 'grant'> {
  return {
    name: 'grant',
    reasons: ['submission_disabled', 'chain_not_granted'],
    adds: 'grant',
    run(ctx) {
      if (!ctx.account.submissionEnabled) return REJECT.submission_disabled;
      const grant = ctx.account.grants.get(ctx.chain.chainId);
      return grant === undefined ? REJECT.chain_not_granted : enrich(ctx, 'grant', grant);
    },
  };
}
