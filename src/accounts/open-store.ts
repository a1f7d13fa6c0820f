/**
 * The one place an account store is built from the configuration (`accounts.store` picks the
 * kind; config.ts in this folder declares each kind's fields). A kind says what it is: how a
 * thread opens it, whether one store serves every thread of a process (the main thread runs it,
 * each worker thread mirrors it), and what stops start-up without it. A new kind is a file (or
 * folder) of its own here, its fields in config.ts and its entry in KINDS below.
 */
import type { AccountsConfig, StoreKindName } from './config.js';
import { FileAccountStore } from './file-store.js';
import { accountsFileProblems } from './file-text.js';
import { parseAccounts } from './parse.js';
import { MirrorAccountStore, type MirrorSeed } from './postgres/mirror.js';
import { postgresStartProblem } from './postgres/start-check.js';
import { PostgresAccountStore } from './postgres/store.js';
import type { AccountStore, MirrorStore, ReloadResult, SharedAccountStore } from './types.js';
import type { Logger } from '../log/log.js';

interface StoreKind {
  /** The store of one thread (the only thread, or each worker thread when the kind is not shared). */
  open(a: AccountsConfig, log: Logger, onReload?: (result: ReloadResult, accounts: number) => void): AccountStore;
  /** One store for the whole process, run by the main thread, and each worker thread's mirror of it. Absent: every thread opens its own. */
  readonly shared?: {
    open(a: AccountsConfig, log: Logger): SharedAccountStore;
    mirror(a: AccountsConfig, seed: unknown): MirrorStore;
  };
  /** What stops start-up, in one line the operator can act on (null: nothing). */
  startProblem(a: AccountsConfig, configFile: string): Promise<string | null>;
}

const postgresStore = (a: AccountsConfig, log: Logger) => new PostgresAccountStore({ url: a.url, maxStaleMs: a.maxStaleMs, resyncMs: a.resyncMs, log });

const KINDS: Record<StoreKindName, StoreKind> = {
  file: {
    open: (a, log, onReload) => new FileAccountStore({ file: a.file, log, ...(onReload !== undefined ? { onReload } : {}) }),
    async startProblem(a, configFile) {
      const problems = await accountsFileProblems(a.file);
      return problems.length === 0 ? null : `accounts file ${a.file}: ${problems.join('; ')}; fix the file or accounts.file in ${configFile}`;
    },
  },
  postgres: {
    open: postgresStore,
    shared: {
      open: postgresStore,
      mirror(a, seed) {
        const s = seed as MirrorSeed; // handed over by PostgresAccountStore.mirrorSeed() on the main thread
        return new MirrorAccountStore(s.state, a.maxStaleMs, s.changes);
      },
    },
    startProblem: postgresStartProblem,
  },
};

export function openStore(a: AccountsConfig, log: Logger, onReload?: (result: ReloadResult, accounts: number) => void): AccountStore {
  return KINDS[a.store].open(a, log, onReload);
}

/** The main thread's store for every thread of the process, or null when each thread opens its own. */
export function openSharedStore(a: AccountsConfig, log: Logger): SharedAccountStore | null {
  return KINDS[a.store].shared?.open(a, log) ?? null;
}

/** A worker thread's mirror of the shared store, from the seed the main thread's store handed on. */
export function openMirror(a: AccountsConfig, seed: unknown): MirrorStore {
  const shared = KINDS[a.store].shared;
  if (shared === undefined) throw new Error(`accounts.store "${a.store}" is not shared across threads`);
  return shared.mirror(a, seed);
}

/** The one line naming what stops start-up for want of accounts (null: nothing does); `configFile` names the settings' file. */
export function storeStartProblem(a: AccountsConfig, configFile: string): Promise<string | null> {
  return KINDS[a.store].startProblem(a, configFile);
}

/**
 * A store of the accounts given, in the accounts file's format and parsed as the file store parses
 * it, fixed for the life of the process: the rehearsal's one account (src/rehearsal/account.ts).
 * Throws AccountsFileError where the document has a problem.
 */
export function fixedStore(doc: unknown): AccountStore {
  const snapshot = parseAccounts(doc);
  return {
    byKeyHash: (h) => snapshot.byHash.get(h),
    ready: true,
    stale: false,
    size: snapshot.accounts.length,
    start: async () => {},
    close: () => {},
  };
}
