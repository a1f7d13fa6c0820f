/**
 * The fleet store's database for a test file: `useFleetDb()` starts a throwaway PostgreSQL with
 * the migrations run before the file's tests and stops it (and every store the tests opened)
 * after them; its members write rows (`put`, `doc`, `lit`), open stores that log to memory (`store`,
 * `loaded`), count the edges' backends, and let through what the edges would refuse
 * (`unguarded`). Its functions may be taken apart (`const { put } = db`).
 */
import { Writable } from 'node:stream';
import { after, before } from 'node:test';
import postgres from 'postgres';
import { keySha256 } from '../../src/accounts/keys.js';
import { CLIENT_OPTIONS } from '../../src/accounts/postgres/connection.js';
import { migrate } from '../../src/accounts/postgres/migrate.js';
import { PostgresAccountStore } from '../../src/accounts/postgres/store.js';
import { TestPostgres } from '../../src/dev/postgres.js';
import { createLogger } from '../../src/log/log.js';
import { eventually, TIP } from './harness.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

export class FleetDb {
  private server: TestPostgres | undefined;
  private readonly stores: PostgresAccountStore[] = [];

  /** The server, from the file's first test on. */
  get pg(): TestPostgres {
    if (this.server === undefined) throw new Error('useFleetDb: the database is started in a before hook; it was read before it ran');
    return this.server;
  }

  async start(): Promise<void> {
    this.server = await TestPostgres.start();
    const sql = postgres(this.server.url(), { ...CLIENT_OPTIONS, max: 1 });
    await migrate(sql);
    await sql.end();
  }

  async stop(): Promise<void> {
    for (const s of this.stores) s.close();
    await this.server?.destroy();
  }

  /** An account document with one grant on the development chain (`grant` merged into it). */
  readonly doc = (id: string, keys: string[], extra: Record<string, unknown> = {}, grant: Record<string, unknown> = {}): Record<string, unknown> => ({
    id,
    keySha256: keys.map(keySha256),
    grants: [{ chainId: DEV_CHAIN_ID, rateLimit: { perSecond: 10, burst: 10 }, tipAddresses: [TIP], minTipWei: '0', ...grant }],
    ...extra,
  });

  /** A value as an SQL literal of its JSON. */
  readonly lit = (v: unknown): string => `'${JSON.stringify(v).replace(/'/g, "''")}'`;

  /** Inserts or replaces a row. */
  readonly put = (d: Record<string, unknown>): void => {
    this.pg.psql(`INSERT INTO txgate_accounts (id, doc) VALUES ('${d.id as string}', ${this.lit(d)}) ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc`);
  };

  /** A store on the database, its log lines kept in memory; closed after the file's tests, or by `closeAll`. */
  readonly store = (resyncMs = 300): { store: PostgresAccountStore; lines: () => Record<string, unknown>[] } => {
    const lines: string[] = [];
    const log = createLogger({
      level: 'debug',
      destination: new Writable({ write: (c: Buffer, _e, cb) => (lines.push(...c.toString().split('\n').filter(Boolean)), cb()) }),
    });
    const s = new PostgresAccountStore({ url: this.pg.url(), maxStaleMs: 30_000, resyncMs, log });
    this.stores.push(s);
    return { store: s, lines: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
  };

  /** Starts a store and waits for its first load (its log in the error when it does not come). */
  readonly loaded = async (s: PostgresAccountStore, lines?: () => Record<string, unknown>[]): Promise<void> => {
    await s.start();
    await eventually(() => s.ready, 20_000).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}: not loaded; store log:\n${JSON.stringify(lines?.() ?? []).slice(0, 4000)}`);
    });
  };

  /** The edges' backends on the server now. */
  readonly backends = (): number => Number(this.pg.psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'txgate'"));

  /** Closes every store the tests opened, and waits for their backends to go. */
  readonly closeAll = async (): Promise<void> => {
    for (const s of this.stores.splice(0)) s.close();
    await eventually(() => this.backends() === 0, 10_000);
  };

  /** The writes the edges would refuse, let through by a hand with the owner's rights. */
  readonly unguarded = (run: () => void): void => {
    this.pg.psql('ALTER TABLE txgate_accounts DISABLE TRIGGER txgate_accounts_limits; ALTER TABLE txgate_accounts DISABLE TRIGGER txgate_accounts_keys');
    try {
      run();
    } finally {
      this.pg.psql('ALTER TABLE txgate_accounts ENABLE TRIGGER txgate_accounts_limits; ALTER TABLE txgate_accounts ENABLE TRIGGER txgate_accounts_keys');
    }
  };
}

/** The file's database: started before its tests, stopped after them. */
export function useFleetDb(): FleetDb {
  const db = new FleetDb();
  before(() => db.start());
  after(() => db.stop());
  return db;
}
