/**
 * What start-up needs of the fleet store: the database must answer the accounts query within
 * `accounts.startWaitMs` (retried meanwhile: a database starting beside txgate is waited for),
 * else its last error (unreachable, authentication failed, no such table, permission denied) is
 * the one line the CLI writes before it exits 1. At run time the store recovers by itself
 * (store.ts).
 */
import postgres from 'postgres';
import type { AccountsConfig } from '../config.js';
import { dbLabel } from './migrate.js';
import { CLIENT_OPTIONS } from './connection.js';

/** Between attempts to reach the database while start-up waits for it. */
const RETRY_MS = 500;

/** The one line naming what stops start-up (null: nothing does); `configFile` names the setting's file. */
export async function postgresStartProblem(a: AccountsConfig, configFile: string): Promise<string | null> {
  const why = await databaseProblem(a.url, a.startWaitMs);
  return why === null
    ? null
    : `accounts database ${dbLabel(a.url)} not usable within ${a.startWaitMs} ms (accounts.startWaitMs): ${why}; check accounts.url in ${configFile}`;
}

/** Null once the accounts query answers; else its last error, after `waitMs` of retries. */
async function databaseProblem(url: string, waitMs: number): Promise<string | null> {
  const deadline = Date.now() + waitMs;
  let last = '';
  for (;;) {
    const left = deadline - Date.now();
    const sql = postgres(url, { ...CLIENT_OPTIONS, max: 1, connect_timeout: Math.max(1, Math.ceil(Math.min(left, 5_000) / 1000)), idle_timeout: 1 });
    try {
      await sql`SELECT id, doc, version FROM txgate_accounts LIMIT 1`;
      return null;
    } catch (e) {
      last = errorText(e, url);
    } finally {
      await sql.end({ timeout: 1 }).catch(() => {});
    }
    if (Date.now() + RETRY_MS > deadline) return last;
    await new Promise((r) => setTimeout(r, RETRY_MS));
  }
}

/** An error's text for one line, never with the URL's password. */
function errorText(e: unknown, url: string): string {
  const err = e as { message?: string; code?: string };
  let text = (err.message ?? String(e)).replace(/\s+/g, ' ');
  if (text === '' && err.code !== undefined) text = err.code;
  try {
    const pw = new URL(url).password;
    if (pw !== '') text = text.split(pw).join('***').split(decodeURIComponent(pw)).join('***');
  } catch {
    /* the URL was validated by the configuration */
  }
  return text;
}
