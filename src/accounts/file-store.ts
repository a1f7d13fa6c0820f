/**
 * The embedded account store: the accounts file, hot-reloaded. The directory is watched by the
 * one file watch (base/file-watch.ts: an atomic rename replaces the file's inode, so watching the
 * file itself would go deaf), a 1-second stat poll backs the watcher up, and SIGHUP forces a
 * re-read. A valid new file takes
 * effect at once by swapping one immutable snapshot (requests in flight keep the account they
 * already resolved); an invalid one is refused with one log line naming every problem, and the
 * last good snapshot stays in force. A key hash two accounts list (a hand edit) stays with the
 * account that held it and only the newcomer's claim on it is refused (key-claims.ts), logged
 * once while it lasts; the key goes to the claimer once its holder gives it up (logged too).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isMainThread, workerData } from 'node:worker_threads';
import { FileWatch } from '../base/file-watch.js';
import type { Logger } from '../log/log.js';
import { parseAccountsText, unreadable } from './file-text.js';
import { settleKeyClaims } from './key-claims.js';
import type { AccountsSnapshot } from './parse.js';
import type { RefusedClaim } from './key-claims.js';
import { initChecksum } from './checksum.js';
import { type Lookup, StoreBase } from './store-base.js';
import type { Account, AccountStore, ReloadResult } from './types.js';

/**
 * Every worker thread reads the file itself, but the operator reads one refusal: the first
 * thread (or the main thread, with one) logs it at error, the others at debug.
 */
const SPEAKS = isMainThread || (workerData as { index?: unknown } | null)?.index === 0;

export interface FileStoreOptions {
  readonly file: string;
  readonly log: Logger;
  /** Stat poll period backing up the file watcher (ms). */
  readonly pollMs?: number;
  /** Called after every reload attempt (metrics). */
  readonly onReload?: (result: ReloadResult, accounts: number) => void;
}

/** The parsed file as the store's lookup. */
class FileSnapshot implements Lookup {
  constructor(readonly parsed: AccountsSnapshot) {}
  byHash(keySha256Hex: string): Account | undefined {
    return this.parsed.byHash.get(keySha256Hex);
  }
  get size(): number {
    return this.parsed.accounts.length;
  }
}

const EMPTY = new FileSnapshot({ byHash: new Map(), accounts: [] });

export class FileAccountStore extends StoreBase implements AccountStore {
  protected snap = EMPTY;
  /** A file is never stale: it is the source itself. */
  protected readonly freshness = null;
  /** Signals reach the main thread only (worker threads are told to reload by a message). */
  readonly hearsSignal = isMainThread;
  private digest = '';
  /** The content last refused: the same bytes seen again (watch, then poll) are not refused twice. */
  private refusedDigest = '';
  private watch: FileWatch | null = null;
  private reloading: Promise<ReloadResult> | null = null;
  private again = false;
  private readonly onHup = () => void this.reload('SIGHUP');
  /** Why the last read was refused (the last good snapshot, if any, stays in force); null after a good load. */
  private refused: string | null = null;
  /** Key claims refused in the snapshot in force (`claimer/hash`), each logged once while it lasts. */
  private refusedClaims = new Set<string>();

  constructor(private readonly opts: FileStoreOptions) {
    super();
  }

  /** Why the file was last refused (readiness says it), or null once a read loaded. */
  override get problem(): string | null {
    return this.refused;
  }

  get accounts(): readonly Account[] {
    return this.snap.parsed.accounts;
  }

  async start(): Promise<void> {
    await initChecksum();
    await this.reload('start');
    // Editors and renames fire several events: coalesced for 20 ms.
    this.watch = new FileWatch([this.opts.file], (trigger) => void this.reload(trigger), this.opts.log, {
      what: 'accounts',
      pollMs: this.opts.pollMs,
      settleMs: 20,
    });
    await this.watch.start();
    // Signals reach the main thread only; worker threads are told to reload by a message.
    if (this.hearsSignal) process.on('SIGHUP', this.onHup);
  }

  close(): void {
    this.watch?.close();
    process.off('SIGHUP', this.onHup);
  }

  /** Re-reads the file; concurrent triggers coalesce into one more read after the current one. */
  reload(trigger: string): Promise<ReloadResult> {
    if (this.reloading !== null) {
      this.again = true;
      return this.reloading;
    }
    const run = async (): Promise<ReloadResult> => {
      let r: ReloadResult;
      do {
        this.again = false;
        r = await this.load(trigger);
      } while (this.again);
      this.reloading = null;
      return r;
    };
    this.reloading = run();
    return this.reloading;
  }

  private async load(trigger: string): Promise<ReloadResult> {
    const { log, file } = this.opts;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      return this.refuse(trigger, [unreadable(e)]);
    }
    const digest = createHash('sha256').update(text).digest('hex');
    // The watcher and the poll both see one change: the content decides, so each change is
    // loaded (or refused) and logged once. SIGHUP always says what it found.
    const forced = trigger === 'SIGHUP';
    if (digest === this.digest) {
      this.refused = null; // the content in force is back
      if (forced) {
        log.info({ trigger, accounts: this.size }, 'accounts reloaded: unchanged');
        this.opts.onReload?.('unchanged', this.size);
      }
      return 'unchanged';
    }
    if (digest === this.refusedDigest && !forced) return 'invalid';
    const parsed = parseAccountsText(text);
    if (!parsed.ok) return this.refuse(trigger, parsed.problems, digest);
    const prev = this.loaded ? this.snap.parsed : null;
    const { snapshot: snap, refused } = settleKeyClaims(parsed.snapshot, (h) => prev?.byHash.get(h)?.id);
    this.snap = new FileSnapshot(snap);
    this.loaded = true;
    this.logClaims(refused, snap);
    this.digest = digest;
    this.refusedDigest = '';
    this.refused = null;
    log.info({ trigger, accounts: snap.accounts.length, keys: snap.byHash.size }, 'accounts loaded');
    this.opts.onReload?.('loaded', snap.accounts.length);
    return 'loaded';
  }

  /** Each refused claim logged once while it lasts; a key reaching an account that waited for it, logged. */
  private logClaims(refused: readonly RefusedClaim[], snap: AccountsSnapshot): void {
    const log = this.opts.log;
    const now = new Set<string>();
    for (const r of refused) {
      const k = `${r.claimer}/${r.hash}`;
      now.add(k);
      if (this.refusedClaims.has(k)) continue;
      const h = r.hash.slice(0, 12);
      log[SPEAKS ? 'error' : 'debug'](
        { account: r.claimer, holder: r.holder, keyHash: h },
        `account "${r.claimer}" lists key hash ${h}… which account "${r.holder}" holds: the claim is refused, the key stays with "${r.holder}"`,
      );
    }
    for (const k of this.refusedClaims) {
      if (now.has(k)) continue;
      const at = k.lastIndexOf('/');
      const [claimer, hash] = [k.slice(0, at), k.slice(at + 1)];
      if (snap.byHash.get(hash)?.id === claimer)
        log[SPEAKS ? 'info' : 'debug'](
          { account: claimer, keyHash: hash.slice(0, 12) },
          `key hash ${hash.slice(0, 12)}… given up by its holder: now held by "${claimer}", which listed it`,
        );
    }
    this.refusedClaims = now;
  }

  private refuse(trigger: string, problems: readonly string[], digest = ''): ReloadResult {
    this.refusedDigest = digest;
    this.refused = `accounts file refused at ${new Date().toISOString()}: ${problems.join('; ')}`;
    this.opts.log[SPEAKS ? 'error' : 'debug'](
      { trigger, file: this.opts.file, problems, keptPrevious: this.loaded },
      `accounts file refused: ${problems.join('; ')}`,
    );
    this.opts.onReload?.('invalid', this.size);
    return 'invalid';
  }
}
