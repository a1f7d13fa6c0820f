/**
 * The auth stage: X-Api-Key → account. The presented key is hashed once (SHA-256) and looked up;
 * only hashes are stored. A missing, unknown or revoked key is 401, and the message never
 * echoes the key. Before the account store has loaded once, the answer is 503 not_ready, and
 * while its snapshot is older than its bound (a database store cut off), 503 credentials_stale
 * (a stale credential cache is a service-side problem, docs/design.md §3.8): never a 401 the client would
 * act on.
 */
import { Exit } from '../base/errors.js';
import { authenticate } from '../accounts/keys.js';
import type { Account, AccountStore } from '../accounts/types.js';
import { fieldSetter, type BaseCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';

const setAccount = fieldSetter('account');

export function createAuthStage(store: AccountStore): Stage<BaseCtx, { readonly account: Account }, 'auth'> {
  return {
    name: 'auth',
    about: 'the account of the API key, by its SHA-256, from the in-memory snapshot',
    reasons: ['credentials_stale', 'unauthorized', 'not_ready'],
    adds: 'account',
    run(ctx) {
      const account = authenticate(store, ctx.head.apiKey);
      return account instanceof Exit ? account : setAccount(ctx, account);
    },
  };
}
