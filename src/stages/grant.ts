/**
 * The chain grant stage: the account must have submission enabled (else 403 submission_disabled)
 * and a grant for the host's chain (else 403 chain_not_granted), the rule connect-time admission
 * shares (admission.ts); a send the route stage calls sync needs the grant's `sync` (else 403
 * sync_not_granted), and the conditional method the grant's `conditional` (else 403
 * conditional_not_granted). A status query is granted by the same rule (status.ts answers it next).
 */
import { Exit, REJECT } from '../base/errors.js';
import { chainGrant } from '../admission/admission.js';
import type { Account, Grant } from '../accounts/types.js';
import type { ChainRuntime } from '../config/chains.js';
import { fieldSetter, type BaseCtx } from '../pipeline/context.js';
import type { Send } from '../rpc/send-kind.js';
import type { Stage } from '../pipeline/pipeline.js';

const setGrant = fieldSetter('grant');

export function createGrantStage(): Stage<
  BaseCtx & { readonly send: Send; readonly account: Account; readonly chain: ChainRuntime },
  { readonly grant: Grant },
  'grant'
> {
  return {
    name: 'grant',
    about: "submission enabled, a grant for the host's chain (for the sync method, a sync grant; for the conditional method, a conditional grant)",
    reasons: ['ok', 'submission_disabled', 'chain_not_granted', 'sync_not_granted', 'conditional_not_granted'],
    adds: 'grant',
    run(ctx) {
      const grant = chainGrant(ctx.account, ctx.chain.chainId);
      if (grant instanceof Exit) return grant;
      const { kind } = ctx.send;
      if (kind === 'conditional') {
        if (!grant.conditional) return REJECT.conditional_not_granted;
      } else if (kind === 'sync' && !grant.sync) return REJECT.sync_not_granted;
      return setGrant(ctx, grant);
    },
  };
}
