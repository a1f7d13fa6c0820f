/**
 * The declarative accounts file (docs/design.md §2.4): validated as a whole; every problem is named.
 * Keys are never stored, only their SHA-256 (lower-case hex). A hash listed twice in one
 * account is refused. A hash listed under two accounts is refused too where a document is
 * written (the CLI); where a snapshot is loaded (the file store: a hand edit), `contested: 'first'`
 * loads it with the hash held by the first claimer in document order and the other claims named
 * in `contested`, for key-claims.ts to settle against the snapshot in force.
 */
import { got, isObj, Reader } from '../base/config-reader.js';
import { AddressList } from './address-list.js';
import { checksumBody } from './checksum.js';
import { ACCOUNT_LIMITS, capProblems } from './limits.js';
import type { Account, FeePattern, Grant } from './types.js';

export interface AccountsSnapshot {
  readonly byHash: ReadonlyMap<string, Account>;
  readonly accounts: readonly Account[];
  /** Key hash → every account listing it, in document order, where more than one does (`contested: 'first'` only). */
  readonly contested?: ReadonlyMap<string, readonly string[]>;
}

export interface ParseOptions {
  /** A hash under two accounts: a problem ('refuse', the default) or held by the first claimer ('first'). */
  readonly contested?: 'refuse' | 'first';
}

export class AccountsFileError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('; '));
    this.name = 'AccountsFileError';
  }
}

/** Envelope types a grant may list: 0 legacy (EIP-155 only), 1 EIP-2930, 2 EIP-1559, 4 EIP-7702. */
export const GRANTABLE_TX_TYPES: readonly number[] = [0, 1, 2, 4];

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const SELECTOR = /^0x[0-9a-fA-F]{8}$/;
const UINT = /^(?:0|[1-9][0-9]{0,77})$/;

/** An array within its limit, else one problem (its entries are not looked at). */
function bounded(v: unknown[], max: number, field: string, problems: string[]): boolean {
  if (v.length <= max) return true;
  problems.push(`${field}: ${v.length} entries, more than the ${max} one account may hold`);
  return false;
}

/** The size of an account's document as compact JSON (the limit's measure here), or why not. */
function docBytes(a: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(a) ?? '');
  } catch {
    return Number.POSITIVE_INFINITY; // nested past the stack, or not serialisable
  }
}

/** An address as configured: 0x + 40 hex; mixed case must carry a valid EIP-55 checksum. */
function address(v: unknown, field: string, problems: string[]): string | undefined {
  return addressBody(v, field, problems)?.[0];
}

/** [lower-case 0x address, EIP-55 body], or undefined with the problem. */
function addressBody(v: unknown, field: string, problems: string[]): [string, string] | undefined {
  if (typeof v !== 'string' || !ADDRESS.test(v)) {
    problems.push(`${field}: must be a 0x-prefixed 20-byte hex address`);
    return undefined;
  }
  const body = v.slice(2);
  const lowerBody = body.toLowerCase();
  const sum = checksumBody(lowerBody);
  if (body !== lowerBody && body !== body.toUpperCase() && sum !== body) {
    problems.push(`${field}: bad EIP-55 checksum`);
    return undefined;
  }
  return ['0x' + lowerBody, sum];
}

/** A list of addresses (distinct, the first of each kept) as an AddressList. */
function addressList(v: unknown[], field: string, problems: string[]): AddressList {
  const lower: string[] = [];
  const sums: string[] = [];
  const seen = new Set<string>();
  for (let k = 0; k < v.length; k++) {
    const a = addressBody(v[k], `${field}[${k}]`, problems);
    if (a === undefined || seen.has(a[0])) continue;
    seen.add(a[0]);
    lower.push(a[0].slice(2));
    sums.push(a[1]);
  }
  return AddressList.of(lower, sums);
}

export function parseAccounts(input: unknown, opts: ParseOptions = {}): AccountsSnapshot {
  const problems: string[] = [];
  const r = new Reader(problems);
  const byHash = new Map<string, Account>();
  const accounts: Account[] = [];
  const hashOwner = new Map<string, string>();
  const claimants = new Map<string, string[]>();
  const settle = opts.contested === 'first';
  const ids = new Set<string>();

  if (!isObj(input) || !Array.isArray(input.accounts)) throw new AccountsFileError(['accounts: must be an array (file: {"accounts":[…]})']);
  r.known(input, '', ['accounts']);

  input.accounts.forEach((a: unknown, i: number) => {
    const f = `accounts[${i}]`;
    if (!isObj(a)) {
      problems.push(`${f}: must be an object`);
      return;
    }
    r.known(a, f, ['id', 'keySha256', 'submissionEnabled', 'allowUntipped', 'grants', 'note']);
    const bytes = docBytes(a);
    if (bytes > ACCOUNT_LIMITS.docBytes) {
      problems.push(
        `${f}: the document is ${Number.isFinite(bytes) ? `${bytes} bytes of JSON` : 'not serialisable'}, more than the ${ACCOUNT_LIMITS.docBytes} one account may hold`,
      );
      return;
    }
    const id = typeof a.id === 'string' && ID.test(a.id) ? a.id : undefined;
    if (id === undefined) problems.push(`${f}.id: must be 1-64 characters of [A-Za-z0-9_.-]`);
    else if (ids.has(id)) problems.push(`${f}.id: "${id}" is listed twice`);
    else ids.add(id);
    const name = id ?? f;

    const hashes: string[] = [];
    const own = new Set<string>();
    if (!Array.isArray(a.keySha256)) problems.push(`${f}.keySha256: must be an array of SHA-256 hex digests`);
    else if (bounded(a.keySha256, ACCOUNT_LIMITS.keys, `${f}.keySha256`, problems))
      a.keySha256.forEach((h: unknown, j: number) => {
        if (typeof h !== 'string' || !SHA256_HEX.test(h)) {
          problems.push(`${f}.keySha256[${j}]: must be 64 hex characters (the SHA-256 of the key, never the key)`);
          return;
        }
        const lower = h.toLowerCase();
        const owner = hashOwner.get(lower);
        if (own.has(lower)) problems.push(`${f}.keySha256[${j}]: duplicate key hash (also listed for ${name})`);
        else if (owner !== undefined && !settle) problems.push(`${f}.keySha256[${j}]: duplicate key hash (also listed for ${owner})`);
        else if (owner === undefined) hashOwner.set(lower, name);
        own.add(lower);
        hashes.push(lower);
      });

    const submissionEnabled = r.bool(a.submissionEnabled, `${f}.submissionEnabled`, true);
    const allowUntipped = r.bool(a.allowUntipped, `${f}.allowUntipped`, false);

    const grants = new Map<number, Grant>();
    if (!Array.isArray(a.grants)) problems.push(`${f}.grants: must be an array`);
    else if (bounded(a.grants, ACCOUNT_LIMITS.grants, `${f}.grants`, problems))
      a.grants.forEach((g: unknown, j: number) => {
        const grant = parseGrant(g, `${f}.grants[${j}]`, name, problems);
        if (grant === undefined) return;
        if (grants.has(grant.chainId)) problems.push(`${f}.grants[${j}].chainId: chain ${grant.chainId} is granted twice`);
        grants.set(grant.chainId, grant);
      });

    if (id === undefined) return;
    const account: Account = Object.freeze({
      id,
      submissionEnabled,
      allowUntipped,
      grants,
    });
    accounts.push(account);
    for (const h of hashes) {
      if (!byHash.has(h)) byHash.set(h, account);
      else claimants.set(h, [...(claimants.get(h) ?? [byHash.get(h)!.id]), id]);
    }
  });

  if (problems.length > 0) throw new AccountsFileError(capProblems(problems));
  return settle ? { byHash, accounts, contested: claimants } : { byHash, accounts };
}

function parseGrant(g: unknown, f: string, accountId: string, problems: string[]): Grant | undefined {
  if (!isObj(g)) {
    problems.push(`${f}: must be an object`);
    return undefined;
  }
  const before = problems.length;
  const r = new Reader(problems);
  r.known(g, f, ['chainId', 'rateLimit', 'txTypes', 'tipAddresses', 'minTipWei', 'feePatterns', 'senders', 'sync', 'expressLane', 'conditional']);
  const chainId = g.chainId;
  if (typeof chainId !== 'number' || !Number.isSafeInteger(chainId) || chainId < 1) problems.push(`${f}.chainId: must be a positive integer, ${got(chainId)}`);

  // The spec: no default or unlimited submission rate may be assumed, so rateLimit is required.
  const rl = g.rateLimit;
  let perSecond = 0;
  let burst = 0;
  if (!isObj(rl)) problems.push(`${f}.rateLimit: required ({"perSecond": >0, "burst": ≥1})`);
  else {
    r.known(rl, `${f}.rateLimit`, ['perSecond', 'burst']);
    if (typeof rl.perSecond !== 'number' || !(rl.perSecond > 0) || rl.perSecond > 1e6)
      problems.push(`${f}.rateLimit.perSecond: must be a number > 0 and ≤ 1000000, ${got(rl.perSecond)}`);
    else perSecond = rl.perSecond;
    if (rl.burst === undefined) problems.push(`${f}.rateLimit.burst: must be an integer from 1 to 1000000`);
    else burst = r.int(rl.burst, `${f}.rateLimit.burst`, 0, 1, 1e6);
  }

  const txTypes = new Set<number>();
  if (g.txTypes === undefined) txTypes.add(2);
  else if (!Array.isArray(g.txTypes) || g.txTypes.length === 0) problems.push(`${f}.txTypes: must be a non-empty array of ${GRANTABLE_TX_TYPES.join(', ')}`);
  else
    g.txTypes.forEach((t: unknown, k: number) => {
      if (t === 3) problems.push(`${f}.txTypes[${k}]: blob transactions (3) are never accepted`);
      else if (typeof t !== 'number' || !GRANTABLE_TX_TYPES.includes(t))
        problems.push(`${f}.txTypes[${k}]: must be one of ${GRANTABLE_TX_TYPES.join(', ')}, ${got(t)}`);
      else txTypes.add(t);
    });

  let tipAddresses = AddressList.of([], []);
  if (!Array.isArray(g.tipAddresses)) problems.push(`${f}.tipAddresses: must be an array of addresses`);
  else if (bounded(g.tipAddresses, ACCOUNT_LIMITS.tipAddresses, `${f}.tipAddresses`, problems))
    tipAddresses = addressList(g.tipAddresses, `${f}.tipAddresses`, problems);

  let minTipWei = 0n;
  if (typeof g.minTipWei !== 'string' || !UINT.test(g.minTipWei)) problems.push(`${f}.minTipWei: must be a decimal string of wei, ${got(g.minTipWei)}`);
  else minTipWei = BigInt(g.minTipWei);

  const feePatterns: FeePattern[] = [];
  if (g.feePatterns === undefined) feePatterns.push({ kind: 'transfer' });
  else if (!Array.isArray(g.feePatterns)) problems.push(`${f}.feePatterns: must be an array`);
  else if (bounded(g.feePatterns, ACCOUNT_LIMITS.feePatterns, `${f}.feePatterns`, problems))
    (g.feePatterns as unknown[]).forEach((p: unknown, k: number) => {
      const pf = `${f}.feePatterns[${k}]`;
      if (!isObj(p)) {
        problems.push(`${pf}: must be an object`);
        return;
      }
      if (p.kind === 'transfer') {
        r.known(p, pf, ['kind']);
        feePatterns.push({ kind: 'transfer' });
      } else if (p.kind === 'call') {
        r.known(p, pf, ['kind', 'to', 'selector', 'receiverArg', 'amountArg']);
        const to = address(p.to, `${pf}.to`, problems);
        const selector = typeof p.selector === 'string' && SELECTOR.test(p.selector) ? p.selector.toLowerCase() : undefined;
        if (selector === undefined) problems.push(`${pf}.selector: must be 0x + 8 hex digits`);
        const argOk = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 64;
        if (!argOk(p.receiverArg)) problems.push(`${pf}.receiverArg: must be an ABI word index from 0 to 63, ${got(p.receiverArg)}`);
        if (!argOk(p.amountArg)) problems.push(`${pf}.amountArg: must be an ABI word index from 0 to 63, ${got(p.amountArg)}`);
        if (to !== undefined && selector !== undefined && argOk(p.receiverArg) && argOk(p.amountArg))
          feePatterns.push({ kind: 'call', to, selector, receiverArg: p.receiverArg as number, amountArg: p.amountArg as number });
      } else problems.push(`${pf}.kind: must be "transfer" or "call", ${got(p.kind)}`);
    });

  // Optional: when present, a non-empty list of the addresses allowed to sign for this grant.
  let senders: AddressList | null = null;
  if (g.senders !== undefined) {
    if (!Array.isArray(g.senders) || g.senders.length === 0) problems.push(`${f}.senders: must be a non-empty array of addresses (or absent)`);
    else if (bounded(g.senders, ACCOUNT_LIMITS.senders, `${f}.senders`, problems)) senders = addressList(g.senders, `${f}.senders`, problems);
  }

  if (g.sync !== undefined && typeof g.sync !== 'boolean') problems.push(`${f}.sync: must be true or false (or absent), ${got(g.sync)}`);
  if (g.expressLane !== undefined && typeof g.expressLane !== 'boolean')
    problems.push(`${f}.expressLane: must be true or false (or absent), ${got(g.expressLane)}`);
  if (g.conditional !== undefined && typeof g.conditional !== 'boolean')
    problems.push(`${f}.conditional: must be true or false (or absent), ${got(g.conditional)}`);

  if (problems.length > before) return undefined;
  return Object.freeze({
    chainId: chainId as number,
    bucketKey: `${accountId}/${chainId as number}`,
    rateLimit: Object.freeze({ perSecond, burst }),
    txTypes,
    tipAddresses,
    minTipWei,
    feePatterns: Object.freeze(feePatterns),
    senders,
    sync: g.sync === true,
    expressLane: g.expressLane === true,
    conditional: g.conditional === true,
  });
}
