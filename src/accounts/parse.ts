/**
 * The declarative accounts file (DESIGN §3): validated as a whole; every problem is named.
 * Keys are never stored, only their SHA-256 (lower-case hex). A hash listed under two accounts
 * is refused: a key must identify exactly one account.
 */
import { toChecksumAddress } from '@ethereumjs/util';
import { isObj, type Obj } from '../config-reader.js';
import type { Account, FeePattern, Grant } from './types.js';

export interface AccountsSnapshot {
  readonly byHash: ReadonlyMap<string, Account>;
  readonly accounts: readonly Account[];
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

function unknownFields(o: Obj, field: string, known: readonly string[], problems: string[]): void {
  for (const k of Object.keys(o)) if (!known.includes(k)) problems.push(`${field}.${k}: unknown field`);
}

/** An address as configured: 0x + 40 hex; mixed case must carry a valid EIP-55 checksum. */
function address(v: unknown, field: string, problems: string[]): string | undefined {
  if (typeof v !== 'string' || !ADDRESS.test(v)) {
    problems.push(`${field}: must be a 0x-prefixed 20-byte hex address`);
    return undefined;
  }
  const lower = v.toLowerCase();
  const body = v.slice(2);
  if (body !== body.toLowerCase() && body !== body.toUpperCase() && toChecksumAddress(lower) !== v) {
    problems.push(`${field}: bad EIP-55 checksum`);
    return undefined;
  }
  return lower;
}

export function parseAccounts(input: unknown): AccountsSnapshot {
  const problems: string[] = [];
  const byHash = new Map<string, Account>();
  const accounts: Account[] = [];
  const hashOwner = new Map<string, string>();
  const ids = new Set<string>();

  if (!isObj(input) || !Array.isArray(input.accounts)) throw new AccountsFileError(['accounts: must be an array (file: {"accounts":[…]})']);
  unknownFields(input, '', ['accounts'], problems);

  input.accounts.forEach((a: unknown, i: number) => {
    const f = `accounts[${i}]`;
    if (!isObj(a)) {
      problems.push(`${f}: must be an object`);
      return;
    }
    unknownFields(a, f, ['id', 'keySha256', 'submissionEnabled', 'allowUntipped', 'grants', 'note'], problems);
    const id = typeof a.id === 'string' && ID.test(a.id) ? a.id : undefined;
    if (id === undefined) problems.push(`${f}.id: must be 1-64 characters of [A-Za-z0-9_.-]`);
    else if (ids.has(id)) problems.push(`${f}.id: "${id}" is listed twice`);
    else ids.add(id);
    const name = id ?? f;

    const hashes: string[] = [];
    if (!Array.isArray(a.keySha256)) problems.push(`${f}.keySha256: must be an array of SHA-256 hex digests`);
    else
      a.keySha256.forEach((h: unknown, j: number) => {
        if (typeof h !== 'string' || !SHA256_HEX.test(h)) {
          problems.push(`${f}.keySha256[${j}]: must be 64 hex characters (the SHA-256 of the key, never the key)`);
          return;
        }
        const lower = h.toLowerCase();
        const owner = hashOwner.get(lower);
        if (owner !== undefined) problems.push(`${f}.keySha256[${j}]: duplicate key hash (also listed for ${owner})`);
        else hashOwner.set(lower, name);
        hashes.push(lower);
      });

    const submissionEnabled = a.submissionEnabled === undefined ? true : a.submissionEnabled;
    if (typeof submissionEnabled !== 'boolean') problems.push(`${f}.submissionEnabled: must be true or false`);
    const allowUntipped = a.allowUntipped === undefined ? false : a.allowUntipped;
    if (typeof allowUntipped !== 'boolean') problems.push(`${f}.allowUntipped: must be true or false`);

    const grants = new Map<number, Grant>();
    if (!Array.isArray(a.grants)) problems.push(`${f}.grants: must be an array`);
    else
      a.grants.forEach((g: unknown, j: number) => {
        const grant = parseGrant(g, `${f}.grants[${j}]`, name, problems);
        if (grant === undefined) return;
        if (grants.has(grant.chainId)) problems.push(`${f}.grants[${j}].chainId: chain ${grant.chainId} is granted twice`);
        grants.set(grant.chainId, grant);
      });

    if (id === undefined) return;
    const account: Account = Object.freeze({
      id,
      submissionEnabled: submissionEnabled === true,
      allowUntipped: allowUntipped === true,
      grants,
    });
    accounts.push(account);
    for (const h of hashes) byHash.set(h, account);
  });

  if (problems.length > 0) throw new AccountsFileError(problems);
  return { byHash, accounts };
}

function parseGrant(g: unknown, f: string, accountId: string, problems: string[]): Grant | undefined {
  if (!isObj(g)) {
    problems.push(`${f}: must be an object`);
    return undefined;
  }
  const before = problems.length;
  unknownFields(g, f, ['chainId', 'rateLimit', 'txTypes', 'tipAddresses', 'minTipWei', 'feePatterns', 'senders', 'sync'], problems);
  const chainId = g.chainId;
  if (typeof chainId !== 'number' || !Number.isSafeInteger(chainId) || chainId < 1) problems.push(`${f}.chainId: must be a positive integer`);

  // The spec: no default or unlimited submission rate may be assumed, so rateLimit is required.
  const rl = g.rateLimit;
  let perSecond = 0;
  let burst = 0;
  if (!isObj(rl)) problems.push(`${f}.rateLimit: required ({"perSecond": >0, "burst": ≥1})`);
  else {
    unknownFields(rl, `${f}.rateLimit`, ['perSecond', 'burst'], problems);
    if (typeof rl.perSecond !== 'number' || !(rl.perSecond > 0) || rl.perSecond > 1e6)
      problems.push(`${f}.rateLimit.perSecond: must be a number > 0 and ≤ 1000000`);
    else perSecond = rl.perSecond;
    if (typeof rl.burst !== 'number' || !Number.isInteger(rl.burst) || rl.burst < 1 || rl.burst > 1e6)
      problems.push(`${f}.rateLimit.burst: must be an integer from 1 to 1000000`);
    else burst = rl.burst;
  }

  const txTypes = new Set<number>();
  if (g.txTypes === undefined) txTypes.add(2);
  else if (!Array.isArray(g.txTypes) || g.txTypes.length === 0) problems.push(`${f}.txTypes: must be a non-empty array of ${GRANTABLE_TX_TYPES.join(', ')}`);
  else
    g.txTypes.forEach((t: unknown, k: number) => {
      if (t === 3) problems.push(`${f}.txTypes[${k}]: blob transactions (3) are never accepted`);
      else if (typeof t !== 'number' || !GRANTABLE_TX_TYPES.includes(t)) problems.push(`${f}.txTypes[${k}]: must be one of ${GRANTABLE_TX_TYPES.join(', ')}`);
      else txTypes.add(t);
    });

  const tipAddresses: string[] = [];
  const tipAddressSet = new Set<string>();
  if (!Array.isArray(g.tipAddresses)) problems.push(`${f}.tipAddresses: must be an array of addresses`);
  else
    g.tipAddresses.forEach((t: unknown, k: number) => {
      const a = address(t, `${f}.tipAddresses[${k}]`, problems);
      if (a !== undefined && !tipAddressSet.has(a)) {
        tipAddressSet.add(a);
        tipAddresses.push(toChecksumAddress(a));
      }
    });

  let minTipWei = 0n;
  if (typeof g.minTipWei !== 'string' || !UINT.test(g.minTipWei)) problems.push(`${f}.minTipWei: must be a decimal string of wei`);
  else minTipWei = BigInt(g.minTipWei);

  const feePatterns: FeePattern[] = [];
  if (g.feePatterns === undefined) feePatterns.push({ kind: 'transfer' });
  else if (!Array.isArray(g.feePatterns)) problems.push(`${f}.feePatterns: must be an array`);
  else
    (g.feePatterns as unknown[]).forEach((p: unknown, k: number) => {
      const pf = `${f}.feePatterns[${k}]`;
      if (!isObj(p)) {
        problems.push(`${pf}: must be an object`);
        return;
      }
      if (p.kind === 'transfer') {
        unknownFields(p, pf, ['kind'], problems);
        feePatterns.push({ kind: 'transfer' });
      } else if (p.kind === 'call') {
        unknownFields(p, pf, ['kind', 'to', 'selector', 'receiverArg', 'amountArg'], problems);
        const to = address(p.to, `${pf}.to`, problems);
        const selector = typeof p.selector === 'string' && SELECTOR.test(p.selector) ? p.selector.toLowerCase() : undefined;
        if (selector === undefined) problems.push(`${pf}.selector: must be 0x + 8 hex digits`);
        const argOk = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 64;
        if (!argOk(p.receiverArg)) problems.push(`${pf}.receiverArg: must be an ABI word index from 0 to 63`);
        if (!argOk(p.amountArg)) problems.push(`${pf}.amountArg: must be an ABI word index from 0 to 63`);
        if (to !== undefined && selector !== undefined && argOk(p.receiverArg) && argOk(p.amountArg))
          feePatterns.push({ kind: 'call', to, selector, receiverArg: p.receiverArg as number, amountArg: p.amountArg as number });
      } else problems.push(`${pf}.kind: must be "transfer" or "call"`);
    });

  // Optional: when present, a non-empty list of the addresses allowed to sign for this grant.
  let senders: Set<string> | null = null;
  if (g.senders !== undefined) {
    if (!Array.isArray(g.senders) || g.senders.length === 0) problems.push(`${f}.senders: must be a non-empty array of addresses (or absent)`);
    else {
      senders = new Set<string>();
      for (const [k, v] of (g.senders as unknown[]).entries()) {
        const a = address(v, `${f}.senders[${k}]`, problems);
        if (a !== undefined) senders.add(a);
      }
    }
  }

  if (g.sync !== undefined && typeof g.sync !== 'boolean') problems.push(`${f}.sync: must be true or false (or absent)`);

  if (problems.length > before) return undefined;
  return Object.freeze({
    chainId: chainId as number,
    bucketKey: `${accountId}/${chainId as number}`,
    rateLimit: Object.freeze({ perSecond, burst }),
    txTypes,
    tipAddresses: Object.freeze(tipAddresses),
    tipAddressSet,
    minTipWei,
    feePatterns: Object.freeze(feePatterns),
    senders,
    sync: g.sync === true,
  });
}
