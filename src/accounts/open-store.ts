/**
 * The one place an account store is built from the configuration: the accounts file, or the
 * PostgreSQL store (a fleet). Worker threads mirror the main thread's database store instead
 * (postgres/mirror.ts).
 */
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { FileAccountStore, type ReloadResult } from './file-store.js';
import { PostgresAccountStore } from './postgres/store.js';
import type { AccountStore } from './types.js';

export function openStore(config: Config, log: Logger, onReload?: (result: ReloadResult, accounts: number) => void): AccountStore {
  const a = config.accounts;
  return a.store === 'postgres'
    ? new PostgresAccountStore({ url: a.url, maxStaleMs: a.maxStaleMs, resyncMs: a.resyncMs, log })
    : new FileAccountStore({ file: a.file, log, ...(onReload !== undefined ? { onReload } : {}) });
}
