/**
 * Applies the SQL migrations shipped in ./migrations (NNN_name.sql, in order), each once, in one
 * transaction under an advisory lock: running it again, or from two machines at once, is safe.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Sql } from 'postgres';

/** The migrations folder in the source tree (the build runs from its checkout, beside it). */
const DIR = fileURLToPath(new URL('../../../../src/accounts/postgres/migrations/', import.meta.url));
const LOCK = 0x7478_6761; // 'txga'

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export function migrations(dir = DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f.slice(4, -4), sql: readFileSync(dir + f, 'utf8') }));
}

/**
 * Applies what is missing; returns the names of the migrations applied now. With `edgeRole`, that
 * role (the edges' read-only login) is granted SELECT on the accounts table, all an edge needs
 * (LISTEN and NOTIFY need no grant).
 */
export async function migrate(sql: Sql, edgeRole?: string): Promise<string[]> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS txgate_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
    const done = new Set((await tx<{ version: number }[]>`SELECT version FROM txgate_migrations`).map((r) => r.version));
    const applied: string[] = [];
    for (const m of migrations()) {
      if (done.has(m.version)) continue;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO txgate_migrations (version, name) VALUES (${m.version}, ${m.name})`;
      applied.push(`${String(m.version).padStart(3, '0')}_${m.name}`);
    }
    if (edgeRole !== undefined) await tx`GRANT SELECT ON txgate_accounts TO ${tx(edgeRole)}`;
    return applied;
  });
}

/** postgres://user:***@host:port/db: safe to log. */
export function dbLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.username !== '' ? u.username + '@' : ''}${u.host}${u.pathname}`;
  } catch {
    return 'postgres://(unparsable url)';
  }
}
