/**
 * API keys: only their SHA-256 is ever stored or compared, and a presented key is turned into
 * the account it names (or why not) here, for the auth stage and GET /tip-addresses alike.
 */
import { hash } from 'node:crypto';
import { type Exit, REJECT } from '../base/errors.js';
import type { Account, AccountStore } from './types.js';

/** Longer keys are refused without hashing: no key we issue comes close. */
export const MAX_KEY_LENGTH = 256;

export function keySha256(key: string): string {
  return hash('sha256', key, 'hex');
}

/**
 * The account of a presented key, or why not: 401 (missing, unknown, revoked), 503 not_ready
 * before the store first loaded, 503 credentials_stale while its snapshot is too old.
 */
export function authenticate(store: AccountStore, key: string): Account | Exit {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) return REJECT.unauthorized;
  if (!store.ready) return REJECT.not_ready;
  if (store.stale) return REJECT.credentials_stale;
  return store.byKeyHash(keySha256(key)) ?? REJECT.unauthorized;
}
