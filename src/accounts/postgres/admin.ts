/**
 * The onboarding CLI's database target: every command reads the accounts in one transaction
 * (the table locked against other writers), applies the change, validates it exactly as the
 * service does, and writes only the rows that changed. A row already invalid (edited by hand)
 * and left untouched does not block other changes; the edges keep refusing it.
 */
import postgres, { type Sql, type TransactionSql } from 'postgres';
import { AdminError, type AccountDoc, type AccountsTarget, type Doc } from '../admin.js';
import { AccountsFileError, parseAccounts } from '../parse.js';
import { migrate } from './migrate.js';
import { CLIENT_OPTIONS } from './connection.js';

export function dbTarget(url: string): AccountsTarget & { readonly sql: Sql; migrate(edgeRole?: string): Promise<string[]> } {
  const sql = postgres(url, { ...CLIENT_OPTIONS, max: 1, connect_timeout: 5 });
  const load = async (tx: Sql | TransactionSql): Promise<{ doc: Doc; before: Map<string, string>; invalid: Set<string> }> => {
    let rows: { id: string; doc: AccountDoc }[];
    try {
      rows = await tx<{ id: string; doc: AccountDoc }[]>`SELECT id, doc FROM txgate_accounts ORDER BY id`;
    } catch (e) {
      if ((e as { code?: string }).code === '42P01')
        throw new AdminError('the database has no txgate_accounts table: run `npm run accounts -- migrate --db …` first');
      throw e;
    }
    const invalid = new Set<string>();
    for (const r of rows) {
      try {
        parseAccounts({ accounts: [r.doc] });
      } catch (e) {
        if (!(e instanceof AccountsFileError)) throw e;
        invalid.add(r.id);
      }
    }
    return { doc: { accounts: rows.map((r) => r.doc) }, before: new Map(rows.map((r) => [r.id, JSON.stringify(r.doc)])), invalid };
  };
  return {
    sql,
    migrate: (edgeRole?: string) => migrate(sql, edgeRole),
    async edit(op) {
      return (await sql.begin(async (tx) => {
        await tx`LOCK TABLE txgate_accounts IN SHARE ROW EXCLUSIVE MODE`;
        const { doc, before, invalid } = await load(tx);
        const out = op(doc);
        // Validated as the service does: every account but those already invalid and untouched.
        parseAccounts({ accounts: doc.accounts.filter((a) => !(invalid.has(a.id) && before.get(a.id) === JSON.stringify(a))) });
        const now = new Set<string>();
        for (const a of doc.accounts) {
          now.add(a.id);
          const json = JSON.stringify(a);
          if (before.get(a.id) === json) continue;
          if (before.has(a.id)) await tx`UPDATE txgate_accounts SET doc = ${tx.json(a as never)} WHERE id = ${a.id}`;
          else await tx`INSERT INTO txgate_accounts (id, doc) VALUES (${a.id}, ${tx.json(a as never)})`;
        }
        for (const id of before.keys()) if (!now.has(id)) await tx`DELETE FROM txgate_accounts WHERE id = ${id}`;
        return out;
      })) as never;
    },
    async read() {
      return (await load(sql)).doc;
    },
    async close() {
      await sql.end({ timeout: 1 });
    },
  };
}
