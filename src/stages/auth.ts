/**
 * Stage 4, auth: X-Api-Key → account. The presented key is hashed once (SHA-256) and looked up;
 * only hashes are stored. A missing, unknown or revoked key is 401, and the message never
 * echoes the key. Before the account store has loaded once, the answer is 503 not_ready, and
 * while its snapshot is older than its bound (a database store cut off), 503 credentials_stale
 * (a stale credential cache is a service-side problem, spec §5): never a 401 the client would
 * act on.
 */
import { hash } from 'node:crypto';
import { Exit, REJECT } from '../errors.js';
import type { Account, AccountStore } from '../accounts/types.js';
import { enrich, type AuthedCtx, type RoutedCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';

/** Longer keys are refused without hashing: no key we issue comes close. */
export const MAX_KEY_LENGTH = 256;

export function keySha256(key: string): string {
  return hash('sha256', key, 'hex');
}

/** The account of a presented key, or why not (401, or 503 before the store first loaded). */
export function authenticate(store: AccountStore, key: string): Account | Exit {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) return REJECT.unauthorized;
  if (!store.ready) return REJECT.not_ready;
  if (store.stale) return REJECT.credentials_stale;
  return store.byKeyHash(keySha256(key)) ?? REJECT.unauthorized;
}

export function createAuthStage(store: AccountStore): Stage<RoutedCtx, AuthedCtx> {
  return {
    name: 'auth',
    run(ctx) {
      const account = authenticate(store, ctx.head.apiKey);
      return account instanceof Exit ? account : enrich(ctx, 'account', account);
    },
  };
}
