/**
 * Onboarding operations on the accounts, in the file or the database store (AccountsTarget).
 * Each one reads the document, changes it, validates the result exactly as the service will
 * (parseAccounts), and writes it in one step: the file replaced atomically (temp file in the
 * same directory, fsync, rename), the database in one transaction (postgres/admin.ts), so a
 * running service never sees a half-written change. Keys are generated here, returned once to be
 * printed, and never written: only their SHA-256 is.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { keySha256 } from './keys.js';
import { parseAccounts } from './parse.js';

/** The recognisable prefix of every key (secret scanners can match `txg_` + 43 base64url). */
export const KEY_PREFIX = 'txg_';

/** A new API key: 256 bits from the OS CSPRNG, base64url, with the prefix. */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export interface GrantSpec {
  chainId: number;
  rateLimit: { perSecond: number; burst: number };
  txTypes?: number[];
  tipAddresses: string[];
  minTipWei: string;
  feePatterns?: ({ kind: 'transfer' } | { kind: 'call'; to: string; selector: string; receiverArg: number; amountArg: number })[];
  /** The sender allow-list (absent: any sender). */
  senders?: string[];
  /** eth_sendRawTransactionSync allowed (where the chain enables it). */
  sync?: boolean;
  /** eth_sendRawTransactionConditional allowed (where the chain enables it; docs/conditional.md). */
  conditional?: boolean;
  /** May be wrapped into the chain's Timeboost express lane (where the chain enables it; docs/express-lane.md). */
  expressLane?: boolean;
}

export interface AccountDoc {
  id: string;
  keySha256: string[];
  submissionEnabled?: boolean;
  allowUntipped?: boolean;
  grants: GrantSpec[];
  [k: string]: unknown;
}

export interface Doc {
  accounts: AccountDoc[];
}

export class AdminError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminError';
  }
}

/** Where the accounts live: the accounts file, or the database store. */
export interface AccountsTarget {
  /** Reads the document, applies `op`, validates the result as the service will, and writes it in one step. */
  edit<T>(op: (doc: Doc) => T, opts?: { create?: boolean }): Promise<T>;
  read(): Promise<Doc>;
  close(): Promise<void>;
}

/** The accounts file, replaced atomically (temp file, fsync, rename). */
export function fileTarget(file: string): AccountsTarget {
  const read = (create: boolean): Doc => {
    if (!existsSync(file)) {
      if (create) return { accounts: [] };
      throw new AdminError(`${file} does not exist`);
    }
    let doc: Doc;
    try {
      doc = JSON.parse(readFileSync(file, 'utf8')) as Doc;
    } catch (e) {
      throw new AdminError(`${file}: not valid JSON (${(e as Error).message})`);
    }
    if (!Array.isArray(doc?.accounts)) throw new AdminError(`${file}: no "accounts" array`);
    return doc;
  };
  return {
    async edit(op, opts = {}) {
      const doc = read(opts.create === true);
      const out = op(doc);
      parseAccounts(doc); // throws AccountsFileError naming every problem: nothing is written
      const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
      const fd = openSync(tmp, 'wx', 0o600);
      try {
        writeSync(fd, JSON.stringify(doc, null, 2) + '\n');
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, file);
      return out;
    },
    async read() {
      return read(false);
    },
    async close() {},
  };
}

function find(doc: Doc, id: string): AccountDoc {
  const a = doc.accounts.find((x) => x.id === id);
  if (a === undefined) throw new AdminError(`no account "${id}"`);
  return a;
}

/** Creates an account with its grants; returns the new key (print it once; it is not stored). */
export function createAccount(t: AccountsTarget, id: string, grants: GrantSpec[], opts: { allowUntipped?: boolean } = {}): Promise<string> {
  return t.edit(
    (doc) => {
      if (doc.accounts.some((a) => a.id === id)) throw new AdminError(`account "${id}" already exists`);
      const key = generateKey();
      doc.accounts.push({ id, keySha256: [keySha256(key)], submissionEnabled: true, allowUntipped: opts.allowUntipped ?? false, grants });
      return key;
    },
    { create: true },
  );
}

export function addGrant(t: AccountsTarget, id: string, grant: GrantSpec): Promise<void> {
  return t.edit((doc) => {
    const a = find(doc, id);
    if (a.grants.some((g) => g.chainId === grant.chainId))
      throw new AdminError(
        `account "${id}" already has a grant for chain ${grant.chainId}: change only the fields you name with \`npm run accounts -- grant-set --id ${id} --chain ${grant.chainId} …\` (e.g. --conditional, --rate R)`,
      );
    a.grants.push(grant);
  });
}

/**
 * What grant-set changes on an existing grant: each field given replaces that field alone
 * (`rateLimit` by its parts); `senders: null` removes the allow-list (any sender); a flag
 * `false` removes it. Fields not given stay as they are.
 */
export interface GrantChange {
  perSecond?: number;
  burst?: number;
  txTypes?: number[];
  tipAddresses?: string[];
  minTipWei?: string;
  feePatterns?: NonNullable<GrantSpec['feePatterns']>;
  senders?: string[] | null;
  sync?: boolean;
  conditional?: boolean;
  expressLane?: boolean;
}

/** Changes only the named fields of the account's grant for `chainId`; returns what changed, as `field: before → after`. */
export function setGrant(t: AccountsTarget, id: string, chainId: number, change: GrantChange): Promise<string[]> {
  return t.edit((doc) => {
    const a = find(doc, id);
    const g = a.grants.find((x) => x.chainId === chainId);
    if (g === undefined)
      throw new AdminError(`account "${id}" has no grant for chain ${chainId}: add one with \`npm run accounts -- grant-add --id ${id} --chain ${chainId} …\``);
    const said: string[] = [];
    const show = (v: unknown) => (v === undefined ? 'unset' : JSON.stringify(v));
    const put = <K extends keyof GrantSpec>(field: K, v: GrantSpec[K] | undefined) => {
      const before = show(g[field]);
      if (v === undefined) delete (g as Partial<GrantSpec>)[field];
      else g[field] = v;
      const after = show(g[field]);
      if (before !== after) said.push(`${field}: ${before} → ${after}`);
    };
    if (change.perSecond !== undefined || change.burst !== undefined)
      put('rateLimit', { perSecond: change.perSecond ?? g.rateLimit.perSecond, burst: change.burst ?? g.rateLimit.burst });
    if (change.txTypes !== undefined) put('txTypes', change.txTypes);
    if (change.tipAddresses !== undefined) put('tipAddresses', change.tipAddresses);
    if (change.minTipWei !== undefined) put('minTipWei', change.minTipWei);
    if (change.feePatterns !== undefined) put('feePatterns', change.feePatterns);
    if (change.senders !== undefined) put('senders', change.senders ?? undefined);
    // A flag turned off is removed (absent is off), so a grant reads as one written by grant-add.
    if (change.sync !== undefined) put('sync', change.sync ? true : undefined);
    if (change.conditional !== undefined) put('conditional', change.conditional ? true : undefined);
    if (change.expressLane !== undefined) put('expressLane', change.expressLane ? true : undefined);
    return said;
  });
}

export function removeGrant(t: AccountsTarget, id: string, chainId: number): Promise<void> {
  return t.edit((doc) => {
    const a = find(doc, id);
    const before = a.grants.length;
    a.grants = a.grants.filter((g) => g.chainId !== chainId);
    if (a.grants.length === before) throw new AdminError(`account "${id}" has no grant for chain ${chainId}`);
  });
}

/** Adds a new key; the old ones keep working until revoked. Returns the new key. */
export function rotateKey(t: AccountsTarget, id: string): Promise<string> {
  return t.edit((doc) => {
    const key = generateKey();
    find(doc, id).keySha256.push(keySha256(key));
    return key;
  });
}

/**
 * Revokes a key, named by its SHA-256 (or a unique prefix of ≥ 8 hex digits, as `list` shows),
 * or by the key itself. Returns the revoked hash.
 */
export function revokeKey(t: AccountsTarget, id: string, which: { hash?: string; key?: string }): Promise<string> {
  return t.edit((doc) => {
    const a = find(doc, id);
    const want = which.key !== undefined ? keySha256(which.key) : (which.hash ?? '').toLowerCase();
    if (want.length < 8) throw new AdminError('name the key by its SHA-256 (at least 8 hex digits) or pass the key itself');
    const matches = a.keySha256.filter((h) => h.toLowerCase().startsWith(want));
    if (matches.length === 0) throw new AdminError(`account "${id}" has no key hash starting with ${want.slice(0, 12)}`);
    if (matches.length > 1) throw new AdminError(`${want} matches ${matches.length} key hashes of "${id}": give more digits`);
    a.keySha256 = a.keySha256.filter((h) => h !== matches[0]);
    return matches[0]!;
  });
}

export function setSubmission(t: AccountsTarget, id: string, enabled: boolean): Promise<void> {
  return t.edit((doc) => {
    find(doc, id).submissionEnabled = enabled;
  });
}

export async function listAccounts(t: AccountsTarget): Promise<{ id: string; submissionEnabled: boolean; keys: string[]; chains: number[] }[]> {
  return (await t.read()).accounts.map((a) => ({
    id: a.id,
    submissionEnabled: a.submissionEnabled !== false,
    keys: a.keySha256.map((h) => h.slice(0, 12)),
    chains: a.grants.map((g) => g.chainId),
  }));
}
