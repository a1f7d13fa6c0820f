/**
 * The fleet store's configuration fields (`accounts.<field>` with `accounts.store: "postgres"`),
 * declared once (config-fields.ts) and the rule between them.
 */
import { custom, int } from '../../base/config-fields.js';
import type { Reader } from '../../base/config-reader.js';

export const POSTGRES_FIELDS = {
  url: custom<string>('a postgres:// URL', 'none', 'with `postgres`: `postgres://user:password@host:port/db` (the password is never logged)', (r, v, path) => {
    if (v === undefined) return '';
    if (typeof v !== 'string') {
      r.problems.push(`${path}: must be a string`);
      return '';
    }
    return v;
  }),
  maxStaleMs: int(120_000, 1_000, 86_400_000, 'with `postgres`: past this age of the last sync, 503 `credentials_stale`'),
  resyncMs: int(
    30_000,
    200,
    3_600_000,
    'with `postgres`: period of the catch-up load (only rows whose version changed); the listener is checked by a heartbeat every second whatever this is',
  ),
  startWaitMs: int(
    30_000,
    0,
    3_600_000,
    'with `postgres`: how long start-up waits for the database to answer the accounts query; past it, one line on stderr and exit 1',
  ),
};

/** With the fleet store, a database URL is required. */
export function checkPostgresFields(r: Reader, a: { readonly url: string }): void {
  if (!/^postgres(?:ql)?:\/\/./.test(a.url)) r.problems.push('accounts.url: required with store "postgres" (postgres://user:password@host:port/db)');
}
