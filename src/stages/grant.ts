/**
 * The chain grant stage: the account must have submission enabled (else 403 submission_disabled)
 * and a grant for the host's chain (else 403 chain_not_granted), the rule connect-time admission
 * shares (admission.ts); a send the route stage calls sync needs the grant's `sync` (else 403
 * sync_not_granted), and the conditional method the grant's `conditional` (else 403
 * conditional_not_granted).
 */
import { Exit, REJECT } from '../base/errors.js';
import { chainGrant } from '../admission/admission.js';
import type { Account, Grant } from '../accounts/types.js';
import type { ChainRuntime } from '../config/chains.js';
import { fieldSetter, type BaseCtx } from '../pipeline/context.js';
import type { Send } from '../rpc/send-kind.js';
import type { Stage } from '../pipeline/pipeline.js';
import type { RawTxParam } from './route.js';

const setGrant = fieldSetter('grant');

/** A tracked chain's status answers (src/track/tracker.ts's Tracker, built in the composition root). */
export interface StatusAnswers {
  status(account: string, hash: string): Exit | Promise<Exit>;
}

export function createGrantStage(
  /** By chain id, the chains that track (the route stage lets the status query through only there). */
  trackers: ReadonlyMap<number, StatusAnswers> = new Map(),
): Stage<
  BaseCtx & { readonly send: Send; readonly account: Account; readonly chain: ChainRuntime; readonly rawTx: RawTxParam },
  { readonly grant: Grant },
  'grant'
> {
  return {
    name: 'grant',
    about: "submission enabled, a grant for the host's chain (for the sync method, a sync grant); a status query is answered here",
    reasons: ['ok', 'submission_disabled', 'chain_not_granted', 'sync_not_granted', 'conditional_not_granted', 'chain_unavailable'],
    adds: 'grant',
    run(ctx) {
      const grant = chainGrant(ctx.account, ctx.chain.chainId);
      if (grant instanceof Exit) return grant;
      const sync = ctx.send.sync;
      if (sync !== false) {
        // A status query, authenticated and granted like a submission: its answer (src/track/).
        if (sync === 'status') return trackers.get(ctx.chain.chainId)!.status(ctx.account.id, ctx.rawTx as string);
        if (sync === 'conditional') {
          if (!grant.conditional) return REJECT.conditional_not_granted;
        } else if (!grant.sync) return REJECT.sync_not_granted;
      }
      return setGrant(ctx, grant);
    },
  };
}
