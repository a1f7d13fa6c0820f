/**
 * The fleet account store: PostgreSQL is the source of truth, and each edge process holds a full
 * in-memory snapshot, so authentication never touches the network (the lookup is the file
 * store's: one Map.get). The snapshot changes one account at a time (snapshot.ts).
 *
 * This file composes the parts and owns when the store loads:
 * - connection.ts: the pool, the LISTEN, the heartbeat and every query's bounds;
 * - loader.ts: reading rows by id, version and size, checking and installing them;
 * - holdings.ts: what the edge holds of each row, the key claims, the changes handed on.
 *
 * Freshness, in layers:
 * - push, by row: a notification only queues its account (a version already held, a deletion of
 *   an account not held: nothing); one worker fetches the queued accounts by primary key, ids and
 *   versions first, then the documents of those whose version differs, at most BATCH a query, one
 *   query at a time and FETCH_GAP_MS apart: whatever the channel carries, an edge does bounded
 *   work per second and at most one fetch per account is in flight. A queue past MAX_PENDING
 *   becomes one diff load.
 * - a diff load at start, on every (re)connect of the listener and every `resyncMs`: ids and
 *   versions of every row, then the documents of the rows whose version differs from what the
 *   edge holds, and the accounts whose row is gone dropped.
 * - a failed load is retried within ~1 s.
 * The last successful sync is shared with every thread (worker threads mirror this snapshot,
 * see mirror.ts): once it is older than `maxStaleMs`, submissions and GET /tip-addresses get
 * 503 credentials_stale and /ready says why; the store recovers by itself when reachable again.
 */
import type { Logger } from '../../log/log.js';
import { initChecksum } from '../checksum.js';
import { StoreBase } from '../store-base.js';
import type { SharedAccountStore } from '../types.js';
import { SESSION, StoreConnection } from './connection.js';
import { Holdings } from './holdings.js';
import { BATCH, RowLoader } from './loader.js';
import type { MirrorSeed } from './mirror.js';
import { RowChecker } from './row-checker.js';
import type { AccountChange } from './snapshot.js';
import { problemOf, STORE_PROBLEMS, StoreState } from './state.js';

/** Between two fetches for notifications. */
const FETCH_GAP_MS = 20;
/** Accounts queued by notifications; past this the queue is dropped for one diff load. */
const MAX_PENDING = 10_000;

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

export class PostgresAccountStore extends StoreBase implements SharedAccountStore {
  readonly state: StoreState;
  /** Large rows are checked off this thread (row-checker.ts). */
  private readonly checker: RowChecker;
  private readonly holdings: Holdings;
  private readonly conn: StoreConnection;
  private readonly loader: RowLoader;
  protected readonly snap: Holdings['snap'];
  protected readonly freshness: { readonly state: StoreState; readonly maxStaleMs: number };
  /** Accounts queued by notifications → the highest version notified (0: deleted). */
  private readonly pending = new Map<string, number>();
  /** A diff load wanted, and its trigger. */
  private full: string | null = null;
  private resolveLoaded!: () => void;
  private readonly loadedOnce = new Promise<void>((r) => (this.resolveLoaded = r));
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** A reload after a failed one, ~1 s later (not the next resync). */
  private retryLoad: NodeJS.Timeout | null = null;
  /** The problem last logged, so a retry every second logs a change only. */
  private logged = 0;
  private closed = false;

  constructor(private readonly opts: PostgresStoreOptions) {
    super();
    this.state = opts.state ?? StoreState.allocate();
    this.freshness = { state: this.state, maxStaleMs: opts.maxStaleMs };
    this.holdings = new Holdings(opts.log, () => this.loaded);
    this.snap = this.holdings.snap;
    this.checker = new RowChecker(opts.url, { connect_timeout: 3, connection: SESSION }, opts.offThreadBytes);
    this.conn = new StoreConnection(opts.url, opts.log, this.state, {
      reload: (trigger) => void this.reload(trigger),
      failed: (trigger, e) => this.failed(trigger, e),
      notified: (id, version) => this.notified(id, version),
    });
    this.loader = new RowLoader({
      conn: this.conn,
      holdings: this.holdings,
      checker: this.checker,
      state: this.state,
      failed: (trigger, e) => this.failed(trigger, e),
      isClosed: () => this.closed,
    });
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
    this.holdings.onChange(cb);
  }

  /** Every account in force, as changes (a mirror's start). */
  current(): AccountChange[] {
    return this.holdings.current();
  }

  /** Connects, listens and loads; resolves after the first attempt (`ready` tells whether it loaded), retrying in the background. */
  async start(): Promise<void> {
    await initChecksum();
    this.conn.open();
    this.timer = setInterval(() => void this.reload('resync'), this.opts.resyncMs);
    this.timer.unref();
    await this.conn.subscribe();
    await this.running;
  }

  /** A notified account queued, unless its version is held already. */
  private notified(id: string, version: number): void {
    const h = this.holdings.get(id);
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
        const h = this.holdings.get(id);
        if (v === 0 ? h === undefined : h !== undefined && h.version >= v) continue; // a diff load got it meanwhile
        ids.push(id);
        if (ids.length === BATCH) break;
      }
      if (ids.length === 0) continue;
      if (!(await this.loader.fetchChanged(ids, 'notify'))) return false;
      this.holdings.emit();
      this.state.synced(false);
      await new Promise((r) => setTimeout(r, FETCH_GAP_MS));
    }
    return true;
  }

  /** A diff load (loader.ts), then the store in force: synced, its first load handed over. */
  private async diffLoad(trigger: string): Promise<boolean> {
    const changed = await this.loader.diff(trigger);
    if (changed === null) return false;
    const first = !this.loaded;
    await this.loader.settle(first);
    const wasDown = this.state.get(StoreState.UP) === 0 && !first;
    this.loaded = true;
    this.state.synced(trigger === 'resync');
    this.logged = 0;
    if (first || wasDown) this.opts.log.info({ db: this.conn.label, trigger, accounts: this.snap.size }, 'accounts loaded from the database');
    else if (changed > 0) this.opts.log.debug({ trigger, accounts: this.snap.size, changed }, 'accounts reloaded');
    this.holdings.emit(first); // the first load is handed over even with no account: the mirrors are ready
    if (first) this.resolveLoaded();
    return true;
  }

  private failed(trigger: string, e: unknown): void {
    this.state.add(StoreState.FAILURES, 1);
    const problem = problemOf(e);
    if (problem !== this.logged || this.state.get(StoreState.UP) !== 0 || this.state.get(StoreState.FAILURES) === 1) {
      this.logged = problem;
      const fields = { db: this.conn.label, trigger, err: (e as Error).message, ageMs: Math.round(this.state.ageMs()) };
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
    if (this.retryLoad !== null) clearTimeout(this.retryLoad);
    this.checker.close();
    this.conn.close();
  }
}
