/**
 * The fleet store's connections to PostgreSQL (store.ts composes them): the pool its queries run
 * on, the LISTEN on txgate_accounts, the heartbeat that proves the listener alive, and reading
 * the notifications it delivers.
 *
 * - push, by row: the migration's triggers NOTIFY the account id and version on every change;
 *   a notification is read in O(1) whatever it carries and handed on as an account id and version
 *   (a payload not ours: nothing). Every (re)subscription asks for a diff load (notifications
 *   sent meanwhile are lost; it runs after LISTEN is in place, so nothing falls between the two).
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
 */
import postgres, { type Sql } from 'postgres';
import { isObj } from '../../base/config-reader.js';
import type { Logger } from '../../log/log.js';
import { dbLabel } from './migrate.js';
import { StoreState } from './state.js';

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
export const SESSION = { application_name: 'txgate', statement_timeout: STATEMENT_TIMEOUT_MS };
/** A query or a LISTEN without any answer for this long means its connection is stuck. */
const STUCK_MS = 5_000;
export const HEARTBEAT_MS = 1_000;
/** A heartbeat the database took and the listener has not delivered within this: deaf (checked every CHECK_MS). */
const DEAF_MS = 1_500;
const CHECK_MS = 250;
/** A notification payload longer than this is not ours. */
const MAX_PAYLOAD = 256;
const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** What the connections report to the store that owns them. */
export interface ConnectionHooks {
  /** A diff load is wanted (a (re)subscription, a connection closed). */
  reload(trigger: string): void;
  /** Something failed (the LISTEN); the store logs it and retries. */
  failed(trigger: string, e: unknown): void;
  /** A notification named an account: its id and version (0: deleted). */
  notified(id: string, version: number): void;
}

export class StoreConnection {
  /** The database as logs name it (no credentials). */
  readonly label: string;
  private sql: Sql | null = null;
  private beatTimer: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  private listening: { unlisten(): Promise<void> } | null = null;
  /** When the LISTEN under way was sent (null: none under way). */
  private subscribingSince: number | null = null;
  /** Heartbeats: the last one sent, the last seen back, and when the database took each unseen one. */
  private pingSeq = 0;
  private pingSeen = 0;
  private readonly pingTaken = new Map<number, number>();
  private lastPing = 0;
  private readonly instance = Math.random().toString(36).slice(2);

  constructor(
    private readonly url: string,
    private readonly log: Logger,
    private readonly state: StoreState,
    private readonly hooks: ConnectionHooks,
  ) {
    this.label = dbLabel(url);
  }

  /** Opens the pool and starts the heartbeat; `subscribe` listens. */
  open(): void {
    this.sql = this.connect();
    this.beatTimer = setInterval(() => this.beat(), CHECK_MS);
    this.beatTimer.unref();
  }

  private connect(): Sql {
    // onclose: a connection that closed (a database stopping, a network cut) is checked at once
    // by a load, so a lost database shows within a second, not at the next resync.
    return postgres(this.url, {
      ...CLIENT_OPTIONS,
      max: 2,
      connect_timeout: 3,
      backoff: reconnectDelay,
      connection: SESSION,
      onclose: () => {
        if (!this.closed) this.hooks.reload('connection closed');
      },
    });
  }

  /** Drops every connection (the pool's and the listener's) and starts anew, listening first. */
  private recycle(why: string): void {
    const old = this.sql;
    if (old === null || this.closed) return;
    this.log.warn({ db: this.label, why }, 'account store connections dropped: reconnecting');
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

  /** LISTENs on the pool in force; a failure is retried every second. */
  async subscribe(): Promise<void> {
    const sql = this.sql;
    if (this.closed || sql === null) return;
    this.subscribingSince = performance.now();
    try {
      // onlisten runs on every (re)subscription: the diff load goes there (LISTEN first).
      const listening = await sql.listen(
        CHANNEL,
        (payload) => this.notified(payload),
        () => this.hooks.reload('listen'),
      );
      if (sql !== this.sql) return; // dropped meanwhile (recycle): its successor subscribes
      this.listening = listening;
      this.subscribingSince = null;
    } catch (e) {
      if (sql !== this.sql) return;
      this.subscribingSince = null;
      this.hooks.failed('listen', e);
      this.retry = setTimeout(() => void this.subscribe(), 1_000);
      this.retry.unref();
    }
  }

  /** O(1) whatever the payload: at most an account handed on. */
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
    this.hooks.notified(id, version);
  }

  /** A query bounded by STUCK_MS: one without an answer drops the connections. */
  async query<T>(run: (sql: Sql) => Promise<T>): Promise<T> {
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

  close(): void {
    this.closed = true;
    if (this.beatTimer !== null) clearInterval(this.beatTimer);
    if (this.retry !== null) clearTimeout(this.retry);
    void this.sql?.end({ timeout: 1 });
  }
}

/** Seconds before a reconnect attempt after `retries` failed ones: 0.1 s doubling to 1 s, jittered. */
export function reconnectDelay(retries: number): number {
  return Math.min(0.1 * 2 ** retries, 1) * (0.5 + Math.random() / 2);
}
