/**
 * The sender allow-list (a grant's `senders`): where the grant lists senders, the transaction's
 * sender is recovered (the one place recovery earns its cost: it is compared with something)
 * and must be listed, else 403 sender_not_allowed. Placed before the rate limit, so bytes signed
 * by anyone else, even with a leaked API key, never spend the account's allowance. A grant
 * without a list pays one property read.
 */
import { Exit, REJECT } from '../base/errors.js';
import type { Grant } from '../accounts/types.js';
import { fieldSetter, type BaseCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';
import type { DecodedTx } from '../tx/types.js';

const setSender = fieldSetter('sender');

/** sender: the recovered sender where the grant's allow-list asked for it, else null (not recovered). */
export function createSenderStage(): Stage<BaseCtx & { readonly grant: Grant; readonly tx: DecodedTx }, { readonly sender: string | null }, 'sender'> {
  return {
    name: 'sender',
    about: 'only where the grant lists senders: the sender is recovered and must be listed',
    reasons: ['invalid_signature', 'sender_not_allowed'],
    adds: 'sender',
    run(ctx) {
      const allowed = ctx.grant.senders;
      if (allowed === null) return setSender(ctx, null);
      const sender = ctx.tx.sender();
      if (sender instanceof Exit) return sender;
      return allowed.has(sender) ? setSender(ctx, sender) : REJECT.sender_not_allowed;
    },
  };
}
