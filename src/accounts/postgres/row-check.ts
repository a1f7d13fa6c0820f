/**
 * The edge's check of one database row: never throws, whatever the row holds. A row is read
 * as text with its size (a row past ACCOUNT_LIMITS.docBytes arrives without its text and is
 * refused by its size alone), parsed, and validated exactly as the accounts file is
 * (parseAccounts, which enforces the same limits); anything else that goes wrong (a document
 * nested past the stack, a bug) refuses the row with the error's message. The problems are
 * capped (limits.ts), so a refusal's log line stays short.
 */
import { capProblems, ACCOUNT_LIMITS } from '../limits.js';
import { AccountsFileError, parseAccounts } from '../parse.js';
import { accountToWire, type AccountWire } from './snapshot.js';

export interface FetchedRow {
  readonly id: string;
  readonly version: number;
  /** The row's doc_bytes (octet_length(doc::text), computed at write). */
  readonly bytes: number;
  /** doc::text, null where bytes is past the limit (not read). */
  readonly text: string | null;
}

export type RowVerdict =
  | { readonly ok: true; readonly id: string; readonly version: number; readonly account: AccountWire; readonly keys: readonly string[] }
  | { readonly ok: false; readonly id: string; readonly version: number; readonly problems: readonly string[] };

export function checkRow(row: FetchedRow): RowVerdict {
  const refuse = (problems: readonly string[]): RowVerdict => ({ ok: false, id: row.id, version: row.version, problems: capProblems(problems) });
  try {
    if (row.text === null || row.bytes > ACCOUNT_LIMITS.docBytes || Buffer.byteLength(row.text) > ACCOUNT_LIMITS.docBytes)
      return refuse([`the document is ${row.bytes} bytes, more than the ${ACCOUNT_LIMITS.docBytes} one account may hold`]);
    const doc: unknown = JSON.parse(row.text);
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return refuse(['the document must be an object']);
    const docId = (doc as { id?: unknown }).id;
    if (docId !== row.id) return refuse([`doc.id ${typeof docId === 'string' ? JSON.stringify(docId.slice(0, 80)) : typeof docId} is not the row id`]);
    const snap = parseAccounts({ accounts: [doc] });
    const account = snap.accounts[0]!;
    return { ok: true, id: row.id, version: row.version, account: accountToWire(account), keys: [...snap.byHash.keys()] };
  } catch (e) {
    if (e instanceof AccountsFileError) return refuse(e.problems.map((p) => p.replace(/^accounts\[0\]/, 'doc')));
    return refuse([`the row could not be checked (${String((e as Error)?.message ?? e).slice(0, 200)})`]);
  }
}
