/**
 * The fleet account store: PostgreSQL is the source of truth, and each edge process holds a full
 * in-memory snapshot, so authentication never touches the network (the lookup is the file
 * store's: one Map.get). The snapshot changes one account at a time (snapshot.ts).
 *
 * Freshness, in layers:
 * - push, by row: LISTEN txgate_accounts on a dedicated connection; the migration's triggers
 *   NOTIFY the account id and version on every change. A notification only queues its account
 *   (a version already held, a deletion of an account not held, a payload not ours: nothing);
 *   one worker fetches the queued accounts by primary key, ids and versions first, then the
 *   documents of those whose version differs, at most BATCH a query, one query at a time and
 *   FETCH_GAP_MS apart: whatever the channel carries, an edge does bounded work per second and
 *   at most one fetch per account is in flight. A queue past MAX_PENDING becomes one diff load.
 * - a diff load at start, on every (re)connect of the listener (notifications sent meanwhile
 *   are lost; it runs after LISTEN is in place, so nothing falls between the two) and every
 *   `resyncMs`: ids and versions of every row, then the documents of the rows whose version
 *   differs from what the edge holds, and the accounts whose row is gone dropped.
 * - a heartbeat every HEARTBEAT_MS: a NOTIFY of our own through the pool; one the database took
 *   that has not come back on the listener within DEAF_MS means the listener is deaf (a frozen
 *   backend, a half-open connection): every connection is dropped and made anew, and the LISTEN
 *   that follows brings a diff load.
 * - every query runs under statement_timeout (STATEMENT_TIMEOUT_MS, set on the session): a query
 *   queued behind a lock is cancelled by the server, so a locked table costs an edge its fixed
 *   connections (the pool's two and the listener), never a backend per abandoned query. A query
 *   with no answer at all (a hung server, a moved address) is given up after STUCK_MS and its
 *   connections dropped and made anew.
 * Reconnecting is bounded: at most ~1 s between attempts (the client library's default backoff
 * grows to 20 s over an outage's failed attempts).
 * The last successful sync is shared with every thread (worker threads mirror this snapshot,
 * see mirror.ts): once it is older than `maxStaleMs`, submissions and GET /tip-addresses get
 * 503 credentials_stale and /ready says why; the store recovers by itself when reachable again.
 *
 * Rows are checked one by one (row-check.ts: never throws, limits.ts bounds them): a refused row
 * is logged once per version with its id and why, its account is not served, and the others
 * stay in force. Key hashes: migration 002 makes the database refuse a second account holding a
 * key; should a snapshot still have two accounts claim one (a database not yet migrated), the
 * account that held it first keeps it (at start, with nothing held yet, the account first by id)
 * and the newcomer's claim is refused, logged once; the key goes to the waiting claimer only
 * when its holder gives it up. A key never moves silently.
 */
import postgres, { type Sql } from 'postgres';
import { isObj } from '../../config-reader.js';
import type { Logger } from '../../log.js';
import { initChecksum } from '../checksum.js';
import { ACCOUNT_LIMITS } from '../limits.js';
import { StoreBase } from '../store-base.js';
import type { Account, SharedAccountStore } from '../types.js';
import type { MirrorSeed } from './mirror.js';
import { dbLabel } from './migrate.js';
import { checkRow, type FetchedRow, type RowVerdict } from './row-check.js';
import { RowChecker } from './row-checker.js';
import { accountFromWire, LiveSnapshot, type AccountChange, type AccountWire } from './snapshot.js';
import { problemOf, STORE_PROBLEMS, StoreState } from './state.js';

export const CHANNEL = 'txgate_accounts';

/**
 * Options every connection to the store takes. `fetch_types: false`: the client otherwise runs a
 * catalog query on each new connection whose failure (a connection closed or dropped while it
 * runs, as in a restart) is an unhandled rejection no caller can catch, which ends the process
 * (porsager/postgres#1192); nothing here sends arrays, which is all those types are for.
 */
export const CLIENT_OPTIONS = { fetch_types: false, onnotice: () => {} } as const;

/** The server cancels an edge's query after this (statement_timeout on the edge's sessions). */
export const STATEMENT_TIMEOUT_MS = 4_000;
/** Every session an edge opens: named, and its queries cancelled by the server past the timeout. */
const SESSION = { application_name: 'txgate', statement_timeout: STATEMENT_TIMEOUT_MS };
/** A query or a LISTEN without any answer for this long means its connection is stuck. */
const STUCK_MS = 5_000;
export const HEARTBEAT_MS = 1_000;
/** A heartbeat the database took and the listener has not delivered within this: deaf (checked every CHECK_MS). */
const DEAF_MS = 1_500;
const CHECK_MS = 250;
/** Rows per fetch by primary key. */
const BATCH = 100;
/** Between two fetches for notifications. */
const FETCH_GAP_MS = 20;
/** Accounts queued by notifications; past this the queue is dropped for one diff load. */
const MAX_PENDING = 10_000;
/** A notification payload longer than this is not ours. */
const MAX_PAYLOAD = 256;
const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export interface PostgresStoreOptions {
  readonly url: string;
  readonly maxStaleMs: number;
  readonly resyncMs: number;
  readonly log: Logger;
  /** The state shared with worker threads (one is made when absent). */
  readonly state?: StoreState;
  /** Rows of at least this much JSON are checked off this thread (row-checker.ts; a bench compares). */
  readonly offThreadBytes?: number;
}

/** A row as listed: id, version and the document's size (doc_bytes), not the document. */
interface Listed {
  readonly id: string;
  readonly version: string | number;
  readonly doc_bytes: string | number | null;
}

/** What the edge holds of one row (a refused row too: its version, so it is not fetched again). */
interface Held {
  readonly version: number;
  readonly account: Account | null;
  readonly wire: AccountWire | null;
  /** The key hashes the row lists. */
  readonly claimed: readonly string[];
  /** Those it holds (a hash another account held first is not). */
  readonly keys: string[];
}

export class PostgresAccountStore extends StoreBase implements SharedAccountStore {
  readonly state: StoreState;
  protected readonly snap = new LiveSnapshot();
  protected readonly freshness: { readonly state: StoreState; readonly maxStaleMs: number };
  /** Large rows are checked off this thread (row-checker.ts). */
  private readonly checker: RowChecker;
  /** Large rows on the checker's thread: account → the version being checked. */
  private readonly checking = new Map<string, number>();
  /** Their checks, awaited by the first load (the port opens with every account in force). */
  private readonly checks = new Set<Promise<void>>();
  private readonly held = new Map<string, Held>();
  /** Key hash → the account holding it. */
  private readonly owner = new Map<string, string>();
  /** Key hash → accounts whose claim on it was refused, the first claimer first. */
  private readonly waiting = new Map<string, string[]>();
  /** Refusals already logged: `id` → version, `id/hash` for key claims. */
  private readonly refusedLogged = new Map<string, number>();
  private readonly claimLogged = new Set<string>();
  /** Accounts queued by notifications → the highest version notified (0: deleted). */
  private readonly pending = new Map<string, number>();
  /** A diff load wanted, and its trigger. */
  private full: string | null = null;
  private resolveLoaded!: () => void;
  private readonly loadedOnce = new Promise<void>((r) => (this.resolveLoaded = r));
  private running: Promise<void> | null = null;
  /** Changes made since they were last handed to the listeners. */
  private changes: AccountChange[] = [];
  private readonly changeListeners: ((changes: readonly AccountChange[]) => void)[] = [];
  private sql: Sql | null = null;
  private timer: NodeJS.Timeout | null = null;
  private beatTimer: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  /** A reload after a failed one, ~1 s later (not the next resync). */
  private retryLoad: NodeJS.Timeout | null = null;
  /** The problem last logged, so a retry every second logs a change only. */
  private logged = 0;
  private closed = false;
  private readonly label: string;
  private listening: { unlisten(): Promise<void> } | null = null;
  /** When the LISTEN under way was sent (null: none under way). */
  private subscribingSince: number | null = null;
  /** Heartbeats: the last one sent, the last seen back, and when the database took each unseen one. */
  private pingSeq = 0;
  private pingSeen = 0;
  private readonly pingTaken = new Map<number, number>();
  private lastPing = 0;
  private readonly instance = Math.random().toString(36).slice(2);

  constructor(private readonly opts: PostgresStoreOptions) {
    super();
    this.state = opts.state ?? StoreState.allocate();
    this.freshness = { state: this.state, maxStaleMs: opts.maxStaleMs };
    this.label = dbLabel(opts.url);
    this.checker = new RowChecker(opts.url, { connect_timeout: 3, connection: SESSION }, opts.offThreadBytes);
  }

  /** What a worker thread's mirror starts from (mirror.ts). */
  mirrorSeed(): MirrorSeed {
    return { state: this.state.buffer, changes: this.loaded ? this.current() : null };
  }

  /** Resolves once the first load is in force (the public port opens after it). */
  whenLoaded(): Promise<void> {
    return this.loadedOnce;
  }

  /** Called with the accounts changed, after the first load and every change (the worker threads' mirrors). */
  onChange(cb: (changes: readonly AccountChange[]) => void): void {
    this.changeListeners.push(cb);
  }

  /** Every account in force, as changes (a mirror's start). */
  current(): AccountChange[] {
    const out: AccountChange[] = [];
    for (const [id, h] of this.held) if (h.wire !== null) out.push({ id, account: h.wire, keys: [...h.keys] });
    return out;
  }

  /** Connects, listens and loads; resolves after the first attempt (`ready` tells whether it loaded), retrying in the background. */
  async start(): Promise<void> {
    await initChecksum();
    this.sql = this.connect();
    this.timer = setInterval(() => void this.reload('resync'), this.opts.resyncMs);
    this.timer.unref();
    this.beatTimer = setInterval(() => this.beat(), CHECK_MS);
    this.beatTimer.unref();
    await this.subscribe();
    await this.running;
  }

  private connect(): Sql {
    // onclose: a connection that closed (a database stopping, a network cut) is checked at once
    // by a load, so a lost database shows within a second, not at the next resync.
    return postgres(this.opts.url, {
      ...CLIENT_OPTIONS,
      max: 2,
      connect_timeout: 3,
      backoff: reconnectDelay,
      connection: SESSION,
      onclose: () => {
        if (!this.closed) void this.reload('connection closed');
      },
    });
  }

  /** Drops every connection (the pool's and the listener's) and starts anew, listening first. */
  private recycle(why: string): void {
    const old = this.sql;
    if (old === null || this.closed) return;
    this.opts.log.warn({ db: this.label, why }, 'account store connections dropped: reconnecting');
    this.sql = this.connect();
    this.listening = null;
    this.subscribingSince = null;
    this.pingTaken.clear();
    this.pingSeen = this.pingSeq;
    old.end({ timeout: 0 }).catch(() => {});
    void this.subscribe();
  }

  /**
   * Every CHECK_MS: a LISTEN unanswered for STUCK_MS, or a heartbeat the database took that
   * has not come back within DEAF_MS, drops the connections; every HEARTBEAT_MS, a heartbeat.
   */
  private beat(): void {
    if (this.closed || this.sql === null) return;
    const now = performance.now();
    if (this.subscribingSince !== null && now - this.subscribingSince > STUCK_MS) {
      this.recycle('LISTEN got no answer');
      return;
    }
    if (this.listening === null) return;
    for (const [n, at] of this.pingTaken)
      if (n > this.pingSeen && now - at > DEAF_MS) {
        this.recycle(`the listener has not delivered a heartbeat in ${DEAF_MS} ms`);
        return;
      }
    if (now - this.lastPing < HEARTBEAT_MS) return;
    this.lastPing = now;
    const n = ++this.pingSeq;
    const sql = this.sql;
    sql.notify(CHANNEL, JSON.stringify({ ping: n, from: this.instance })).then(
      () => {
        if (sql === this.sql && n > this.pingSeen) this.pingTaken.set(n, performance.now());
      },
      () => {},
    );
  }

  private async subscribe(): Promise<void> {
    const sql = this.sql;
    if (this.closed || sql === null) return;
    this.subscribingSince = performance.now();
    try {
      // onlisten runs on every (re)subscription: the diff load goes there (LISTEN first).
      const listening = await sql.listen(
        CHANNEL,
        (payload) => this.notified(payload),
        () => void this.reload('listen'),
      );
      if (sql !== this.sql) return; // dropped meanwhile (recycle): its successor subscribes
      this.listening = listening;
      this.subscribingSince = null;
    } catch (e) {
      if (sql !== this.sql) return;
      this.subscribingSince = null;
      this.failed('listen', e);
      this.retry = setTimeout(() => void this.subscribe(), 1_000);
      this.retry.unref();
    }
  }

  /** O(1) whatever the payload: at most a queued account. */
  private notified(payload: string): void {
    this.state.add(StoreState.NOTIFICATIONS, 1);
    if (payload.length > MAX_PAYLOAD) return;
    let m: unknown;
    try {
      m = JSON.parse(payload);
    } catch {
      return; // not ours: the resync is the backstop for anything a notification could mean
    }
    if (!isObj(m)) return;
    if (m.ping !== undefined) {
      // A heartbeat: ours proves the listener alive; another edge's means nothing here.
      if (m.from === this.instance && typeof m.ping === 'number' && m.ping > this.pingSeen) {
        this.pingSeen = m.ping;
        for (const n of this.pingTaken.keys()) if (n <= m.ping) this.pingTaken.delete(n);
      }
      return;
    }
    const { id, version } = m;
    if (typeof id !== 'string' || !ID.test(id) || typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) return;
    const h = this.held.get(id);
    if (version === 0 ? h === undefined : h !== undefined && h.version >= version) return; // held already
    if ((this.pending.get(id) ?? -1) >= version && version !== 0) return;
    if (!this.pending.has(id) && this.pending.size >= MAX_PENDING) {
      this.pending.clear();
      this.full ??= 'notification queue full';
    } else this.pending.set(id, version);
    this.kick();
  }

  /** A diff load now (after the fetch under way); resolves when the work queued is done. */
  reload(trigger: string): Promise<void> {
    this.full ??= trigger;
    this.kick();
    return this.running ?? Promise.resolve();
  }

  private kick(): void {
    if (this.running !== null || this.closed) return;
    this.running = this.work().then((ok) => {
      this.running = null;
      // After a failure the retry (~1 s, a diff load) picks up what is queued: no tight loop.
      if (ok && !this.closed && (this.full !== null || (this.loaded && this.pending.size > 0))) this.kick();
    });
  }

  /** The one worker: diff loads first, then queued accounts, one query at a time; false after a failure. */
  private async work(): Promise<boolean> {
    while (!this.closed) {
      if (this.full !== null) {
        const trigger = this.full;
        this.full = null;
        if (!(await this.diffLoad(trigger))) return false;
        continue;
      }
      if (!this.loaded || this.pending.size === 0) return true;
      const ids: string[] = [];
      for (const [id, v] of this.pending) {
        this.pending.delete(id);
        const h = this.held.get(id);
        if (v === 0 ? h === undefined : h !== undefined && h.version >= v) continue; // a diff load got it meanwhile
        ids.push(id);
        if (ids.length === BATCH) break;
      }
      if (ids.length === 0) continue;
      if (!(await this.fetchChanged(ids, 'notify'))) return false;
      this.emit();
      this.state.synced(false);
      await new Promise((r) => setTimeout(r, FETCH_GAP_MS));
    }
    return true;
  }

  /** A query bounded by STUCK_MS: one without an answer drops the connections. */
  private async query<T>(run: (sql: Sql) => Promise<T>): Promise<T> {
    const sql = this.sql;
    if (sql === null || this.closed) throw new Error('closed');
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        if (sql === this.sql) this.recycle('a query got no answer');
        reject(new Error(`no answer within ${STUCK_MS} ms`));
      }, STUCK_MS);
    });
    try {
      return await Promise.race([run(sql), bound]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ids, versions and sizes of every row; the rows whose version differs fetched; the gone dropped. */
  private async diffLoad(trigger: string): Promise<boolean> {
    let list: readonly Listed[];
    try {
      list = await this.query((sql) => sql<Listed[]>`SELECT id, version, doc_bytes FROM txgate_accounts ORDER BY id`);
    } catch (e) {
      this.failed(trigger, e);
      return false;
    }
    const present = new Set(list.map((r) => r.id));
    for (const id of [...this.held.keys()]) if (!present.has(id)) this.remove(id);
    const changed = list.filter((r) => this.held.get(r.id)?.version !== Number(r.version));
    if (!(await this.fetchRows(changed, trigger))) {
      this.emit();
      return false;
    }
    const first = !this.loaded;
    if (first) await Promise.all(this.checks);
    this.checks.clear();
    const wasDown = this.state.get(StoreState.UP) === 0 && !first;
    this.loaded = true;
    this.state.synced(trigger === 'resync');
    this.logged = 0;
    if (first || wasDown) this.opts.log.info({ db: this.label, trigger, accounts: this.snap.size }, 'accounts loaded from the database');
    else if (changed.length > 0) this.opts.log.debug({ trigger, accounts: this.snap.size, changed: changed.length }, 'accounts reloaded');
    this.emit(first); // the first load is handed over even with no account: the mirrors are ready
    if (first) this.resolveLoaded();
    return true;
  }

  /** Queued accounts: their versions first, then the rows whose version differs. */
  private async fetchChanged(ids: readonly string[], trigger: string): Promise<boolean> {
    let list: readonly Listed[];
    try {
      list = await this.query((sql) => sql<Listed[]>`SELECT id, version, doc_bytes FROM txgate_accounts WHERE id IN ${sql(ids as string[])}`);
    } catch (e) {
      this.failed(trigger, e); // its retry is a diff load: these accounts with every other
      return false;
    }
    const found = new Set(list.map((r) => r.id));
    for (const id of ids) if (!found.has(id) && this.held.has(id)) this.remove(id);
    return this.fetchRows(
      list.filter((r) => this.held.get(r.id)?.version !== Number(r.version)),
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
        this.install(checkRow({ id: r.id, version: Number(r.version), bytes: size, text: null }));
        continue;
      }
      if (size >= this.checker.inlineBytes) {
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
    let rows: readonly { id: string; version: string; doc_bytes: number; text: string }[];
    try {
      rows = await this.query(
        (sql) => sql<{ id: string; version: string; doc_bytes: number; text: string }[]>`
          SELECT id, version, doc_bytes, doc::text AS text FROM txgate_accounts WHERE id IN ${sql(ids as string[])} ORDER BY id`,
      );
    } catch (e) {
      this.failed(trigger, e);
      return false;
    }
    this.state.add(StoreState.ROWS_FETCHED, rows.length);
    const seen = new Set<string>();
    for (const r of rows) {
      seen.add(r.id);
      const row: FetchedRow = { id: r.id, version: Number(r.version), bytes: Number(r.doc_bytes), text: r.text };
      if (this.held.get(row.id)?.version === row.version) continue;
      this.install(checkRow(row));
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
    this.checking.set(id, version);
    this.checks.add(
      this.checker.check(id).then((a) => {
        if (this.checking.get(id) !== version || this.closed) return;
        this.checking.delete(id);
        if ('error' in a) {
          this.failed(trigger, new Error(a.error));
          return;
        }
        this.state.add(StoreState.ROWS_FETCHED, 1);
        if (a.verdict === null) this.remove(id);
        else if ((this.held.get(id)?.version ?? -1) !== a.verdict.version) this.install(a.verdict);
        this.emit();
      }),
    );
  }

  private install(v: RowVerdict): void {
    if (!v.ok) {
      if (this.refusedLogged.get(v.id) !== v.version) {
        this.refusedLogged.set(v.id, v.version);
        this.opts.log.error(
          { account: v.id, version: v.version, problems: v.problems },
          `account row refused: ${v.problems.join('; ')} (the other accounts stay in force)`,
        );
      }
      this.set(v.id, v.version, null, null, []);
      return;
    }
    this.refusedLogged.delete(v.id);
    this.set(v.id, v.version, accountFromWire(v.account), v.account, v.keys);
  }

  private remove(id: string): void {
    this.checking.delete(id);
    this.set(id, 0, null, null, []);
    this.held.delete(id);
    this.refusedLogged.delete(id);
  }

  /** The account's new row (account null: refused or gone), its key claims settled. */
  private set(id: string, version: number, account: Account | null, wire: AccountWire | null, claimed: readonly string[]): void {
    const prev = this.held.get(id);
    const now = new Set(claimed);
    const freed: string[] = [];
    for (const h of prev?.keys ?? [])
      if (!now.has(h)) {
        this.owner.delete(h);
        freed.push(h);
      }
    for (const h of prev?.claimed ?? []) if (!now.has(h)) this.unwait(h, id);
    const keys: string[] = [];
    const lost: string[] = [];
    for (const h of claimed) {
      const o = this.owner.get(h);
      if (o === undefined || o === id) {
        this.owner.set(h, id);
        keys.push(h);
        this.unwait(h, id);
        continue;
      }
      if (!this.loaded && id < o) {
        // The first load (nothing served yet): the first by id holds it, whatever order the
        // rows arrived in (small ones first, large ones from the checker's thread).
        this.owner.set(h, id);
        keys.push(h);
        this.unwait(h, id);
        lost.push(o);
        this.refuseClaim(o, this.held.get(o)?.version ?? 0, h, id, true);
        continue;
      }
      this.refuseClaim(id, version, h, o, false);
    }
    this.held.set(id, { version, account, wire, claimed: account === null ? [] : claimed, keys });
    this.changed(id, account, wire, keys);
    for (const o of lost) {
      const n = this.held.get(o);
      if (n === undefined) continue;
      const left = n.keys.filter((h) => this.owner.get(h) === o);
      this.held.set(o, { ...n, keys: left });
      this.changed(o, n.account, n.wire, left);
    }
    for (const h of freed) this.handOver(h);
  }

  /** `id`'s claim on `h` refused (`holder` keeps it), logged once; `first`: put before the other waiting claimers. */
  private refuseClaim(id: string, version: number, h: string, holder: string, first: boolean): void {
    const w = this.waiting.get(h) ?? [];
    if (!w.includes(id)) first ? w.unshift(id) : w.push(id);
    this.waiting.set(h, w);
    if (this.claimLogged.has(`${id}/${h}`)) return;
    this.claimLogged.add(`${id}/${h}`);
    this.opts.log.error(
      { account: id, version, holder, keyHash: h.slice(0, 12) },
      `account "${id}" lists key hash ${h.slice(0, 12)}… which account "${holder}" holds: the claim is refused, the key stays with "${holder}"`,
    );
  }

  /** A key its holder gave up goes to the first account still claiming it. */
  private handOver(h: string): void {
    const w = this.waiting.get(h);
    const next = w?.shift();
    if (w !== undefined && w.length === 0) this.waiting.delete(h);
    if (next === undefined) return;
    const n = this.held.get(next);
    if (n === undefined || n.account === null) {
      this.handOver(h);
      return;
    }
    this.owner.set(h, next);
    n.keys.push(h);
    this.claimLogged.delete(`${next}/${h}`);
    this.opts.log.info(
      { account: next, keyHash: h.slice(0, 12) },
      `key hash ${h.slice(0, 12)}… given up by its holder: now held by "${next}", which listed it`,
    );
    this.changed(next, n.account, n.wire, n.keys);
  }

  private unwait(h: string, id: string): void {
    const w = this.waiting.get(h);
    if (w === undefined) return;
    const i = w.indexOf(id);
    if (i >= 0) w.splice(i, 1);
    if (w.length === 0) this.waiting.delete(h);
    this.claimLogged.delete(`${id}/${h}`);
  }

  private changed(id: string, account: Account | null, wire: AccountWire | null, keys: readonly string[]): void {
    this.snap.apply(id, account, keys);
    this.changes.push({ id, account: wire, keys: [...keys] });
  }

  /** Hands the changes made to the listeners (once the first load is in force). */
  private emit(always = false): void {
    if (!this.loaded || (this.changes.length === 0 && !always)) return;
    const changes = this.changes;
    this.changes = [];
    for (const cb of this.changeListeners) cb(changes);
  }

  private failed(trigger: string, e: unknown): void {
    this.state.add(StoreState.FAILURES, 1);
    const problem = problemOf(e);
    if (problem !== this.logged || this.state.get(StoreState.UP) !== 0 || this.state.get(StoreState.FAILURES) === 1) {
      this.logged = problem;
      const fields = { db: this.label, trigger, err: (e as Error).message, ageMs: Math.round(this.state.ageMs()) };
      const serving = this.loaded ? 'serving the last snapshot until it is older than maxStaleMs' : 'no accounts loaded yet: not ready';
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
    if (this.beatTimer !== null) clearInterval(this.beatTimer);
    if (this.retry !== null) clearTimeout(this.retry);
    if (this.retryLoad !== null) clearTimeout(this.retryLoad);
    this.checker.close();
    void this.sql?.end({ timeout: 1 });
  }
}

/** Seconds before a reconnect attempt after `retries` failed ones: 0.1 s doubling to 1 s, jittered. */
export function reconnectDelay(retries: number): number {
  return Math.min(0.1 * 2 ** retries, 1) * (0.5 + Math.random() / 2);
}
