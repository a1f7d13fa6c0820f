/**
 * The fleet account store: PostgreSQL is the source of truth, and each edge process holds a full
 * in-memory snapshot, so authentication never touches the network (the lookup is the file
 * store's: one Map.get).
 *
 * Freshness, in layers:
 * - push: LISTEN txgate_accounts on a dedicated connection; the migration's triggers NOTIFY the
 *   account id and version on every change, and a notification for a version not yet held
 *   triggers a reload;
 * - on every connect and reconnect of the listener (notifications sent meanwhile are lost): a
 *   full reload, after LISTEN is in place, so nothing falls between the two;
 * - a full resync every `resyncMs` through the pool, the backstop if the listener died quietly,
 *   which also proves the store is reachable; with it a heartbeat on the listening connection:
 *   a NOTIFY of our own, once the database took it, must come back before the next resync, else
 *   the listener is subscribed anew (the client library gives up re-subscribing if the server
 *   is still down when the connection drops).
 * Reconnecting is bounded: at most ~1 s between attempts (the client library's default backoff
 * grows to 20 s over an outage's failed attempts, so an edge could stay stale that long after
 * the database was back). A connection that neither answers nor fails (a hung server, an
 * address a failover moved while the old host died silently) would hold every later query and
 * the LISTEN: when a load or a LISTEN gets no answer within STUCK_MS, every connection is
 * dropped and made anew.
 * The last successful sync is shared with every thread (worker threads mirror this snapshot,
 * see mirror.ts): once it is older than `maxStaleMs`, submissions and GET /tip-addresses get
 * 503 credentials_stale and /ready says why; the store recovers by itself when reachable again.
 * Rows are validated one by one exactly as the accounts file is: an invalid row (written by
 * hand) is refused and logged once, and the others stay in force.
 */
import postgres, { type Sql } from 'postgres';
import type { Logger } from '../../log.js';
import { AccountsFileError, parseAccounts, type AccountsSnapshot } from '../parse.js';
import type { Account, AccountStore } from '../types.js';
import { dbLabel } from './migrate.js';
import { problemOf, STORE_PROBLEMS, StoreState } from './state.js';

export const CHANNEL = 'txgate_accounts';

/**
 * Options every connection to the store takes. `fetch_types: false`: the client otherwise runs a
 * catalog query on each new connection whose failure (a connection closed or dropped while it
 * runs, as in a restart) is an unhandled rejection no caller can catch, which ends the process
 * (porsager/postgres#1192); nothing here sends arrays, which is all those types are for.
 */
export const CLIENT_OPTIONS = { fetch_types: false, onnotice: () => {} } as const;

/** A load or a LISTEN without an answer for this long means its connection is stuck. */
const STUCK_MS = 5_000;

export interface PostgresStoreOptions {
  readonly url: string;
  readonly maxStaleMs: number;
  readonly resyncMs: number;
  readonly log: Logger;
  /** The state shared with worker threads (one is made when absent). */
  readonly state?: StoreState;
}

interface Row {
  readonly id: string;
  readonly doc: unknown;
  readonly version: string | number;
}

export class PostgresAccountStore implements AccountStore {
  readonly state: StoreState;
  private snapshot: AccountsSnapshot | null = null;
  private docs: readonly unknown[] = [];
  private readonly versions = new Map<string, number>();
  /** Invalid rows already logged (id → version), so a resync does not log them again. */
  private readonly refused = new Map<string, number>();
  private readonly changeListeners: ((docs: readonly unknown[]) => void)[] = [];
  private sql: Sql | null = null;
  private timer: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  /** A reload after a failed one, ~1 s later (not the next resync). */
  private retryLoad: NodeJS.Timeout | null = null;
  /** The problem last logged, so a retry every second logs a change only. */
  private logged = 0;
  private loading: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private readonly label: string;
  private listening: { unlisten(): Promise<void> } | null = null;
  /** When the LISTEN under way was sent (null: none under way). */
  private subscribingSince: number | null = null;
  /** Heartbeats: the last one sent, the last the database took, the last seen back on the listener. */
  private pingSeq = 0;
  private pingSent = 0;
  private pingSeen = 0;
  private readonly instance = Math.random().toString(36).slice(2);

  constructor(private readonly opts: PostgresStoreOptions) {
    this.state = opts.state ?? StoreState.allocate();
    this.label = dbLabel(opts.url);
  }

  get ready(): boolean {
    return this.snapshot !== null;
  }

  get stale(): boolean {
    return this.snapshot !== null && this.state.ageMs() > this.opts.maxStaleMs;
  }

  get size(): number {
    return this.snapshot?.accounts.length ?? 0;
  }

  /** Why the store could not be read last time (null once it was). */
  get problem(): string | null {
    return STORE_PROBLEMS[this.state.get(StoreState.PROBLEM)] ?? null;
  }

  byKeyHash(keySha256Hex: string): Account | undefined {
    return this.snapshot?.byHash.get(keySha256Hex);
  }

  /** Called with the valid documents after every change (the worker threads' mirrors). */
  onChange(cb: (docs: readonly unknown[]) => void): void {
    this.changeListeners.push(cb);
  }

  /** The valid documents of the snapshot in force. */
  current(): readonly unknown[] {
    return this.docs;
  }

  /** Connects, listens and loads; resolves after the first attempt (`ready` tells whether it loaded), retrying in the background. */
  async start(): Promise<void> {
    this.sql = this.connect();
    this.timer = setInterval(() => void this.tick(), this.opts.resyncMs);
    this.timer.unref();
    await this.subscribe();
  }

  private connect(): Sql {
    // onclose: a connection that closed (a database stopping, a network cut) is checked at once
    // by a reload, so a lost database shows within a second, not at the next resync.
    return postgres(this.opts.url, {
      ...CLIENT_OPTIONS,
      max: 2,
      connect_timeout: 3,
      backoff: reconnectDelay,
      connection: { application_name: 'txgate' },
      onclose: () => {
        if (!this.closed) void this.reload('connection closed');
      },
    });
  }

  /** Drops every connection (the pool's and the listener's) and starts anew, listening first. */
  private recycle(why: string): void {
    const old = this.sql;
    if (old === null || this.closed) return;
    this.opts.log.warn({ db: this.label, why }, 'account store connections stuck: dropping them and reconnecting');
    this.sql = this.connect();
    this.listening = null;
    this.subscribingSince = null;
    old.end({ timeout: 0 }).catch(() => {});
    void this.subscribe();
  }

  /** Every resyncMs: each of the periodic jobs, in this order. */
  private async tick(): Promise<void> {
    if (this.closed || this.sql === null) return;
    this.checkStuckListen();
    this.checkHeartbeat();
    this.sendHeartbeat();
    await this.reload('resync');
  }

  /** A LISTEN that got no answer within STUCK_MS: its connection is dropped for a new one. */
  private checkStuckListen(): void {
    if (this.subscribingSince !== null && performance.now() - this.subscribingSince > STUCK_MS) this.recycle('LISTEN got no answer');
  }

  /** The last heartbeat must have come back through the listener, else subscribe anew. */
  private checkHeartbeat(): void {
    if (this.pingSent <= this.pingSeen || this.listening === null) return;
    this.opts.log.warn({ db: this.label }, 'account change notifications stopped arriving: subscribing again');
    const old = this.listening;
    this.listening = null;
    // Not awaited: the channel is dropped at once, so the LISTEN that follows is sent anew on
    // the listening connection (after the UNLISTEN), even while that connection reconnects.
    old.unlisten().catch(() => {});
    void this.subscribe();
  }

  /**
   * The next heartbeat, a NOTIFY of our own: counted as sent once the database took it (a
   * heartbeat the pool could not deliver says nothing of the listener).
   */
  private sendHeartbeat(): void {
    if (this.listening === null || this.sql === null) return;
    const n = ++this.pingSeq;
    this.sql.notify(CHANNEL, JSON.stringify({ ping: n, from: this.instance })).then(
      () => (this.pingSent = Math.max(this.pingSent, n)),
      () => {},
    );
  }

  private async subscribe(): Promise<void> {
    const sql = this.sql;
    if (this.closed || sql === null) return;
    this.subscribingSince = performance.now();
    try {
      // onlisten runs on every (re)subscription: the full reload goes there (LISTEN first).
      const listening = await sql.listen(
        CHANNEL,
        (payload) => this.notified(payload),
        () => void this.reload('listen'),
      );
      if (sql !== this.sql) return; // dropped meanwhile (recycle): its successor subscribes
      this.listening = listening;
      this.subscribingSince = null;
      this.pingSeen = this.pingSeq; // every heartbeat sent before this subscription is settled
    } catch (e) {
      if (sql !== this.sql) return;
      this.subscribingSince = null;
      this.failed('listen', e);
      this.retry = setTimeout(() => void this.subscribe(), 1_000);
      this.retry.unref();
    }
  }

  private notified(payload: string): void {
    let id = '';
    let version = -1;
    try {
      const m = JSON.parse(payload) as { id?: unknown; version?: unknown; ping?: unknown; from?: unknown };
      if (m.ping !== undefined) {
        // A heartbeat: ours proves the listener alive; another edge's means nothing here.
        if (m.from === this.instance && typeof m.ping === 'number') this.pingSeen = Math.max(this.pingSeen, m.ping);
        return;
      }
      id = String(m.id);
      version = Number(m.version);
    } catch {
      /* a malformed payload still means "something changed" */
    }
    this.state.add(StoreState.NOTIFICATIONS, 1);
    if (id !== '' && version > 0 && this.versions.get(id) === version) return; // held already
    void this.reload('notify');
  }

  /** A full reload; concurrent triggers coalesce into one more after the one running. */
  reload(trigger: string): Promise<void> {
    if (this.loading !== null) {
      this.again = true;
      return this.loading;
    }
    const run = async () => {
      do {
        this.again = false;
        await this.load(trigger);
      } while (this.again && !this.closed);
      this.loading = null;
    };
    this.loading = run();
    return this.loading;
  }

  private async load(trigger: string): Promise<void> {
    const sql = this.sql;
    if (sql === null || this.closed) return;
    let rows: readonly Row[];
    let timer: NodeJS.Timeout | undefined;
    let stuck = false;
    try {
      // Bounded: a query stuck on a connection that went away must not hold every later reload.
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          stuck = true;
          reject(new Error(`no answer within ${STUCK_MS} ms`));
        }, STUCK_MS);
      });
      rows = await Promise.race([sql<Row[]>`SELECT id, doc, version FROM txgate_accounts ORDER BY id`, bound]);
    } catch (e) {
      this.failed(trigger, e);
      if (stuck && sql === this.sql) this.recycle('a load got no answer');
      return;
    } finally {
      clearTimeout(timer);
    }
    const good: unknown[] = [];
    const owner = new Map<string, string>(); // key hash → account id, across rows
    this.versions.clear();
    for (const row of rows) {
      const version = Number(row.version);
      const problems = rowProblems(row, owner);
      if (problems.length > 0) {
        if (this.refused.get(row.id) !== version) {
          this.refused.set(row.id, version);
          this.opts.log.error({ account: row.id, version, problems }, `account row refused: ${problems.join('; ')} (the other accounts stay in force)`);
        }
        continue;
      }
      this.refused.delete(row.id);
      for (const h of (row.doc as { keySha256: string[] }).keySha256) owner.set(h.toLowerCase(), row.id);
      this.versions.set(row.id, version);
      good.push(row.doc);
    }
    // A refused row deleted since (or gone with its account) is forgotten.
    if (this.refused.size > 0) {
      const present = new Set(rows.map((r) => r.id));
      for (const id of this.refused.keys()) if (!present.has(id)) this.refused.delete(id);
    }
    const snap = parseAccounts({ accounts: good });
    const first = this.snapshot === null;
    const wasDown = this.state.get(StoreState.UP) === 0 && !first;
    this.snapshot = snap;
    this.docs = good;
    this.state.synced(trigger === 'resync');
    this.logged = 0;
    if (first || wasDown) this.opts.log.info({ db: this.label, trigger, accounts: good.length }, 'accounts loaded from the database');
    else this.opts.log.debug({ trigger, accounts: good.length }, 'accounts reloaded');
    for (const cb of this.changeListeners) cb(good);
  }

  private failed(trigger: string, e: unknown): void {
    this.state.add(StoreState.FAILURES, 1);
    const problem = problemOf(e);
    if (problem !== this.logged || this.state.get(StoreState.UP) !== 0 || this.state.get(StoreState.FAILURES) === 1) {
      this.logged = problem;
      const fields = { db: this.label, trigger, err: (e as Error).message, ageMs: Math.round(this.state.ageMs()) };
      const serving = this.snapshot === null ? 'no accounts loaded yet: not ready' : 'serving the last snapshot until it is older than maxStaleMs';
      if (problem === 1) this.opts.log.warn(fields, `account store unreachable: ${serving}`);
      else this.opts.log.error(fields, `account store refused this edge (${STORE_PROBLEMS[problem]}): ${serving}`);
    }
    this.state.set(StoreState.UP, 0);
    this.state.set(StoreState.PROBLEM, problem);
    // Try again within ~1 s, whatever failed: a grant given, a database back, are seen at once.
    if (this.retryLoad === null && !this.closed) {
      this.retryLoad = setTimeout(() => {
        this.retryLoad = null;
        void this.reload('retry');
      }, 1_000);
      this.retryLoad.unref();
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    if (this.retry !== null) clearTimeout(this.retry);
    if (this.retryLoad !== null) clearTimeout(this.retryLoad);
    void this.sql?.end({ timeout: 1 });
  }
}

/** Seconds before a reconnect attempt after `retries` failed ones: 0.1 s doubling to 1 s, jittered. */
export function reconnectDelay(retries: number): number {
  return Math.min(0.1 * 2 ** retries, 1) * (0.5 + Math.random() / 2);
}

/** Why a row cannot be served: the file's validation, and key hashes another row already holds. */
function rowProblems(row: Row, owner: ReadonlyMap<string, string>): string[] {
  try {
    parseAccounts({ accounts: [row.doc] });
  } catch (e) {
    if (e instanceof AccountsFileError) return [...e.problems];
    throw e;
  }
  const doc = row.doc as { id: unknown; keySha256: string[] };
  if (doc.id !== row.id) return [`doc.id ${JSON.stringify(doc.id)} is not the row id`];
  return doc.keySha256
    .filter((h) => owner.has(h.toLowerCase()))
    .map((h) => `key hash ${h.slice(0, 12)}… already belongs to account "${owner.get(h.toLowerCase())}"`);
}
