/**
 * Reading the fleet store's rows (store.ts composes it and decides when): the ids, versions and
 * sizes of the rows first, then the documents of those whose version differs from what the edge
 * holds (holdings.ts), by primary key, at most BATCH rows and ACCOUNT_LIMITS.docBytes bytes a
 * query, each row checked (row-check.ts: never throws, limits.ts bounds them) and installed; a
 * row whose id is gone dropped. A large row is read and checked off this thread (row-checker.ts)
 * while the others go on.
 */
import { ACCOUNT_LIMITS } from '../limits.js';
import type { StoreConnection } from './connection.js';
import type { Holdings } from './holdings.js';
import { checkRow, type FetchedRow } from './row-check.js';
import type { RowChecker } from './row-checker.js';
import { StoreState } from './state.js';

/** Rows per fetch by primary key. */
export const BATCH = 100;

/** A row as listed: id, version and the document's size (doc_bytes), not the document. */
interface Listed {
  readonly id: string;
  readonly version: string | number;
  readonly doc_bytes: string | number | null;
}

/** What the loader needs of the store that runs it. */
export interface LoaderHost {
  readonly conn: StoreConnection;
  readonly holdings: Holdings;
  readonly checker: RowChecker;
  readonly state: StoreState;
  /** A query failed: logged, and a diff load retried. */
  failed(trigger: string, e: unknown): void;
  isClosed(): boolean;
}

export class RowLoader {
  /** Large rows on the checker's thread: account → the version being checked. */
  private readonly checking = new Map<string, number>();
  /** Their checks, awaited by the first load (the port opens with every account in force). */
  private readonly checks = new Set<Promise<void>>();

  constructor(private readonly host: LoaderHost) {}

  /** Every row listed; those whose version differs fetched, the gone dropped. The rows fetched; null after a failure. */
  async diff(trigger: string): Promise<number | null> {
    const { holdings } = this.host;
    let list: readonly Listed[];
    try {
      list = await this.host.conn.query((sql) => sql<Listed[]>`SELECT id, version, doc_bytes FROM txgate_accounts ORDER BY id`);
    } catch (e) {
      this.host.failed(trigger, e);
      return null;
    }
    const present = new Set(list.map((r) => r.id));
    for (const id of holdings.ids()) if (!present.has(id)) this.remove(id);
    const changed = list.filter((r) => holdings.get(r.id)?.version !== Number(r.version));
    if (!(await this.fetchRows(changed, trigger))) {
      holdings.emit();
      return null;
    }
    return changed.length;
  }

  /** The off-thread checks under way awaited (`wait`: the first load), and forgotten. */
  async settle(wait: boolean): Promise<void> {
    if (wait) await Promise.all(this.checks);
    this.checks.clear();
  }

  /** Queued accounts: their versions first, then the rows whose version differs. */
  async fetchChanged(ids: readonly string[], trigger: string): Promise<boolean> {
    const { holdings } = this.host;
    let list: readonly Listed[];
    try {
      list = await this.host.conn.query((sql) => sql<Listed[]>`SELECT id, version, doc_bytes FROM txgate_accounts WHERE id IN ${sql(ids as string[])}`);
    } catch (e) {
      this.host.failed(trigger, e); // its retry is a diff load: these accounts with every other
      return false;
    }
    const found = new Set(list.map((r) => r.id));
    for (const id of ids) if (!found.has(id) && holdings.get(id) !== undefined) this.remove(id);
    return this.fetchRows(
      list.filter((r) => holdings.get(r.id)?.version !== Number(r.version)),
      trigger,
    );
  }

  /**
   * The listed rows' documents by primary key, each checked and installed: a row past the size
   * limit is refused unread; the others are read in batches of at most BATCH rows and
   * ACCOUNT_LIMITS.docBytes bytes (a large row alone). A row gone meanwhile is dropped.
   */
  private async fetchRows(listed: readonly Listed[], trigger: string): Promise<boolean> {
    let batch: string[] = [];
    let bytes = 0;
    const flush = async (): Promise<boolean> => {
      if (batch.length === 0) return true;
      const ids = batch;
      batch = [];
      bytes = 0;
      return this.fetchBatch(ids, trigger);
    };
    // Small rows first; a row whose version is being checked already is not read again.
    const todo = listed.filter((r) => this.checking.get(r.id) !== Number(r.version)).sort((a, b) => Number(a.doc_bytes) - Number(b.doc_bytes));
    for (const r of todo) {
      const size = Number(r.doc_bytes);
      if (!(size <= ACCOUNT_LIMITS.docBytes)) {
        this.host.holdings.install(checkRow({ id: r.id, version: Number(r.version), bytes: size, text: null }));
        continue;
      }
      if (size >= this.host.checker.inlineBytes) {
        this.checkOffThread(r.id, Number(r.version), trigger);
        continue;
      }
      if (batch.length === BATCH || (batch.length > 0 && bytes + size > ACCOUNT_LIMITS.docBytes)) if (!(await flush())) return false;
      batch.push(r.id);
      bytes += size;
    }
    return flush();
  }

  private async fetchBatch(ids: readonly string[], trigger: string): Promise<boolean> {
    const { holdings } = this.host;
    let rows: readonly { id: string; version: string; doc_bytes: number; text: string }[];
    try {
      rows = await this.host.conn.query(
        (sql) => sql<{ id: string; version: string; doc_bytes: number; text: string }[]>`
          SELECT id, version, doc_bytes, doc::text AS text FROM txgate_accounts WHERE id IN ${sql(ids as string[])} ORDER BY id`,
      );
    } catch (e) {
      this.host.failed(trigger, e);
      return false;
    }
    this.host.state.add(StoreState.ROWS_FETCHED, rows.length);
    const seen = new Set<string>();
    for (const r of rows) {
      seen.add(r.id);
      const row: FetchedRow = { id: r.id, version: Number(r.version), bytes: Number(r.doc_bytes), text: r.text };
      if (holdings.get(row.id)?.version === row.version) continue;
      holdings.install(checkRow(row));
    }
    for (const id of ids) if (!seen.has(id)) this.remove(id);
    return true;
  }

  /**
   * A large row, read and checked on the checker's thread while this one goes on with the
   * other accounts (a revocation never waits behind a large grant); its verdict is installed
   * when it comes, unless the account changed or went meanwhile.
   */
  private checkOffThread(id: string, version: number, trigger: string): void {
    const { holdings } = this.host;
    this.checking.set(id, version);
    this.checks.add(
      this.host.checker.check(id).then((a) => {
        if (this.checking.get(id) !== version || this.host.isClosed()) return;
        this.checking.delete(id);
        if ('error' in a) {
          this.host.failed(trigger, new Error(a.error));
          return;
        }
        this.host.state.add(StoreState.ROWS_FETCHED, 1);
        if (a.verdict === null) this.remove(id);
        else if ((holdings.get(id)?.version ?? -1) !== a.verdict.version) holdings.install(a.verdict);
        holdings.emit();
      }),
    );
  }

  /** An account whose row is gone (a check of it under way is forgotten). */
  private remove(id: string): void {
    this.checking.delete(id);
    this.host.holdings.remove(id);
  }
}
