/**
 * Stage 4, auth: X-Api-Key → account. The presented key is hashed once (SHA-256) and looked up;
 * only hashes are stored. A missing, unknown or revoked key is 401, and the message never
 * echoes the key. Before the account store has loaded once, the answer is 503 (a stale
 * credential cache is a service-side problem, spec §5), never a 401 the client would act on.
 */
import { hash } from 'node:crypto';
import { REJECT } from '../errors.js';
import type { AccountStore } from '../accounts/types.js';
import { enrich, type AuthedCtx, type RoutedCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';

/** Longer keys are refused without hashing: no key we issue comes close. */
export const MAX_KEY_LENGTH = 256;

export function keySha256(key: string): string {
  return hash('sha256', key, 'hex');
}

export function createAuthStage(store: AccountStore): Stage<RoutedCtx, AuthedCtx> {
  return {
    name: 'auth',
    run(ctx) {
      const key = ctx.head.apiKey;
      if (key.length === 0 || key.length > MAX_KEY_LENGTH) return REJECT.unauthorized;
      if (!store.ready) return REJECT.not_ready;
      const account = store.byKeyHash(keySha256(key));
      return account === undefined ? REJECT.unauthorized : enrich(ctx, 'account', account);
    },
  };
}
