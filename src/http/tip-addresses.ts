/**
 * GET /tip-addresses (X-Api-Key): the fee receivers of the account for the host's chain, or for
 * another granted chain named by `?chainId=` (decimal or 0x-hex, any length, read exactly). Authentication and grants
 * answer exactly as for submission (401/403). The body is built once per grant (on its first
 * request) and cached with its ETag; If-None-Match gives 304.
 */
import { createHash } from 'node:crypto';
import { toChecksumAddress } from '@ethereumjs/util';
import { type Exit, reject, type Header } from '../base/errors.js';
import { admit, refused } from '../admission/admission.js';
import type { Account, AccountStore, Grant } from '../accounts/types.js';
import type { HostTable } from '../config/chains.js';
import type { GetAnswer, TipAddressesHandler } from './get-routes.js';

interface Cached {
  /** The answer's bytes, outside the JavaScript heap: written as they are on every request. */
  readonly body: Uint8Array;
  readonly etag: string;
}

export interface TipAddressesOptions {
  readonly store: AccountStore;
  readonly hosts: HostTable;
  /** The deployment's permission for untipped plain transfers. */
  readonly allowUntipped: boolean;
  readonly maxAgeSeconds: number;
}

/** Stands for the address list in the answer's JSON until it is spliced in (no address can be it). */
const LIST = '\u0000tips';
const LIST_JSON = JSON.stringify(LIST);

/**
 * The answer for one grant and its ETag. The address list is spliced in as the JSON text it
 * already is (address-list.ts), and the ETag hashes the answer with the list's digest in its
 * place: a 100,000-address grant's answer costs one copy of its bytes, no string (a string of
 * megabytes costs its allocation, its collection, and a UTF-8 copy on every write).
 */
export function tipAddressesAnswer(account: Account, grant: Grant, allowUntippedDeployment: boolean): Cached {
  const text = JSON.stringify({
    chainId: '0x' + grant.chainId.toString(16),
    tipAddresses: LIST,
    minTipWei: grant.minTipWei.toString(),
    feePatterns: grant.feePatterns.map((p) =>
      p.kind === 'transfer'
        ? { kind: 'transfer' }
        : { kind: 'call', to: toChecksumAddress(p.to), selector: p.selector, receiverArg: p.receiverArg, amountArg: p.amountArg },
    ),
    txTypes: [...grant.txTypes].sort().map((t) => '0x' + t.toString(16).padStart(2, '0')),
    untippedAllowed: account.allowUntipped && allowUntippedDeployment,
    // Whether only listed senders may submit on this grant (the list itself is not shown).
    senderAllowList: grant.senders !== null,
  });
  const at = text.indexOf(LIST_JSON);
  const before = text.slice(0, at);
  const after = text.slice(at + LIST_JSON.length);
  const etag = `"${createHash('sha256').update(before).update(grant.tipAddresses.digest).update(after).digest('base64url').slice(0, 22)}"`;
  const list = grant.tipAddresses.listed;
  const head = Buffer.byteLength(before);
  const body = Buffer.allocUnsafeSlow(head + list.byteLength + Buffer.byteLength(after));
  body.write(before, 0);
  body.set(list, head);
  body.write(after, head + list.byteLength);
  return { body, etag };
}

function fail(exit: Exit, account?: string): GetAnswer {
  return {
    status: exit.status,
    body: exit.body('null'),
    reason: exit.reason,
    ...(account !== undefined ? { account } : {}),
    ...(exit.headers !== undefined ? { headers: exit.headers } : {}),
  };
}

/**
 * `4663` or `0x1237` (any length, leading zeros allowed) → 4663n, exactly (BigInt); anything else
 * → null. Every spelling of one value gives the same answer.
 */
export function parseChainIdParam(v: string): bigint | null {
  if (/^[0-9]+$/.test(v) || /^0x[0-9a-fA-F]+$/.test(v)) return BigInt(v);
  return null;
}

/** A chain asked for, as it is named in an answer: canonical hex, or none if absurdly long. */
function chainName(id: bigint): string {
  const hex = id.toString(16);
  return hex.length <= 64 ? `chain 0x${hex}` : 'the chain asked for';
}

/** The chain whose addresses are asked for: `?chainId=` (granted to the account) or the host's. */
function askedChain(query: string, chain: { readonly chainId: number }, account: Account): number | Exit {
  const asked = new URLSearchParams(query).get('chainId');
  if (asked === null) return chain.chainId;
  const id = parseChainIdParam(asked);
  if (id === null) return reject('invalid_params', 'Invalid params: chainId must be a decimal or 0x-hex chain id');
  // A value no chain can have (beyond 2^53) is refused as one this account is not granted.
  const chainId = id <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : -1;
  return chainId >= 0 && account.grants.has(chainId) ? chainId : reject('chain_not_granted', `This account is not granted ${chainName(id)}`);
}

export function createTipAddressesHandler(opts: TipAddressesOptions): TipAddressesHandler {
  const cache = new WeakMap<Grant, Cached>();
  const cacheControl = `private, max-age=${opts.maxAgeSeconds}`;
  return (head, query, ifNoneMatch) => {
    // Host → key → grant as for a submission (admission.ts), the grant for `?chainId=` when asked.
    const a = admit(opts, head, (chain, account) => askedChain(query, chain, account));
    if (refused(a)) return fail(a.exit, a.account);
    const { account, grant } = a;

    let c = cache.get(grant);
    if (c === undefined) {
      c = tipAddressesAnswer(account, grant, opts.allowUntipped);
      cache.set(grant, c);
    }
    const headers: Header[] = [
      ['etag', c.etag],
      ['cache-control', cacheControl],
      ['vary', 'X-Api-Key'],
    ];
    if (ifNoneMatch !== '' && ifNoneMatch.split(',').some((t) => t.trim() === c.etag || t.trim() === '*'))
      return { status: 304, body: '', headers, account: account.id };
    return { status: 200, body: c.body, headers, account: account.id };
  };
}
