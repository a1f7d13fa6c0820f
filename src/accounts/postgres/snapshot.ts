/**
 * The fleet store's snapshot, changed one account at a time: the store thread decides which key
 * hashes each account holds (key-owner rules: holdings.ts) and every thread applies the same
 * changes here, so authentication stays one Map.get and a change costs O(that account).
 * What crosses threads is an AccountChange: the account as structured-clone data (its address
 * lists as two strings each: address-list.ts) and the key hashes it holds.
 */
import { AddressList, type AddressListWire } from '../address-list.js';
import { parseAccounts } from '../parse.js';
import type { Account, Grant } from '../types.js';

export interface GrantWire extends Omit<Grant, 'tipAddresses' | 'senders'> {
  readonly tipAddresses: AddressListWire;
  readonly senders: AddressListWire | null;
}

export interface AccountWire extends Omit<Account, 'grants'> {
  readonly grants: ReadonlyMap<number, GrantWire>;
}

/** One account's new state: in force with these key hashes, or gone (null). */
export interface AccountChange {
  readonly id: string;
  readonly account: AccountWire | null;
  readonly keys: readonly string[];
}

export function accountToWire(a: Account): AccountWire {
  const grants = new Map<number, GrantWire>();
  for (const [chain, g] of a.grants) grants.set(chain, { ...g, tipAddresses: g.tipAddresses.toWire(), senders: g.senders?.toWire() ?? null });
  return { id: a.id, submissionEnabled: a.submissionEnabled, allowUntipped: a.allowUntipped, grants };
}

export function accountFromWire(w: AccountWire): Account {
  const grants = new Map<number, Grant>();
  for (const [chain, g] of w.grants)
    grants.set(
      chain,
      Object.freeze({
        ...g,
        rateLimit: Object.freeze({ ...g.rateLimit }),
        feePatterns: Object.freeze([...g.feePatterns]),
        tipAddresses: AddressList.fromWire(g.tipAddresses),
        senders: g.senders === null ? null : AddressList.fromWire(g.senders),
      }),
    );
  return Object.freeze({ id: w.id, submissionEnabled: w.submissionEnabled, allowUntipped: w.allowUntipped, grants });
}

export class LiveSnapshot {
  private readonly byHash_ = new Map<string, Account>();
  private readonly keysOf = new Map<string, readonly string[]>();

  get size(): number {
    return this.keysOf.size;
  }

  byHash(h: string): Account | undefined {
    return this.byHash_.get(h);
  }

  /** The account in force with exactly these key hashes, or removed (account null). */
  apply(id: string, account: Account | null, keys: readonly string[]): void {
    for (const h of this.keysOf.get(id) ?? []) if (this.byHash_.get(h)?.id === id) this.byHash_.delete(h);
    if (account === null) {
      this.keysOf.delete(id);
      return;
    }
    this.keysOf.set(id, keys);
    for (const h of keys) this.byHash_.set(h, account);
  }

  applyWire(c: AccountChange): void {
    this.apply(c.id, c.account === null ? null : accountFromWire(c.account), c.keys);
  }
}

/** Valid account documents as the changes that put them in force (benches, tests). */
export function changesOf(docs: readonly unknown[]): AccountChange[] {
  const snap = parseAccounts({ accounts: docs });
  const keys = new Map<string, string[]>();
  for (const [h, a] of snap.byHash) keys.set(a.id, [...(keys.get(a.id) ?? []), h]);
  return snap.accounts.map((a) => ({ id: a.id, account: accountToWire(a), keys: keys.get(a.id) ?? [] }));
}
