/**
 * The accounts file's text to a snapshot, or every problem with it: the one reading used by the
 * file store (each load and reload) and by start-up (which refuses to start on a bad file).
 */
import { readFile } from 'node:fs/promises';
import { AccountsFileError, parseAccounts, type AccountsSnapshot } from './parse.js';

export type AccountsText = { readonly ok: true; readonly snapshot: AccountsSnapshot } | { readonly ok: false; readonly problems: readonly string[] };

/**
 * Parses the file's text: JSON, then the accounts document (every problem named). A key hash two
 * accounts claim does not refuse the file: the snapshot names it for the store to settle
 * (key-claims.ts), so a hand edit costs the newcomer that key, not every account its update.
 */
export function parseAccountsText(text: string): AccountsText {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, problems: [`not valid JSON (${(e as Error).message})`] };
  }
  try {
    return { ok: true, snapshot: parseAccounts(json, { contested: 'first' }) };
  } catch (e) {
    if (e instanceof AccountsFileError) return { ok: false, problems: e.problems };
    throw e;
  }
}

/** Why the file cannot be read, as a problem. */
export function unreadable(e: unknown): string {
  return `cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
}

/** The problems of the accounts file at `file` (none: it would load). */
export async function accountsFileProblems(file: string): Promise<readonly string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    return [unreadable(e)];
  }
  const r = parseAccountsText(text);
  return r.ok ? [] : r.problems;
}
