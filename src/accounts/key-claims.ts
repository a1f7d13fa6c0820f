/**
 * Who holds a key hash that two accounts of a loaded snapshot claim (the file store: a hand
 * edit). The account that held it in the snapshot in force keeps it; with none of the claimers
 * holding it (the first load, or a key new to all of them), the first claimer in document order.
 * Every other claim on that hash is refused, that hash only: the rest of the account stays in
 * force. A key never moves while its holder still lists it; it goes to a waiting claimer once
 * its holder gives it up. (The fleet store settles claims row by row: postgres/holdings.ts.)
 */
import type { AccountsSnapshot } from './parse.js';
import type { Account } from './types.js';

export interface RefusedClaim {
  readonly hash: string;
  /** The account that keeps the key. */
  readonly holder: string;
  /** The account whose claim is refused. */
  readonly claimer: string;
}

/** The snapshot with every contested hash held as above, and the claims refused. */
export function settleKeyClaims(
  snap: AccountsSnapshot,
  heldBefore: (hash: string) => string | undefined,
): { readonly snapshot: AccountsSnapshot; readonly refused: readonly RefusedClaim[] } {
  const contested = snap.contested;
  if (contested === undefined || contested.size === 0) return { snapshot: snap, refused: [] };
  const byId = new Map<string, Account>(snap.accounts.map((a) => [a.id, a]));
  const byHash = new Map(snap.byHash);
  const refused: RefusedClaim[] = [];
  for (const [hash, claimers] of contested) {
    const before = heldBefore(hash);
    const holder = before !== undefined && claimers.includes(before) ? before : claimers[0]!;
    byHash.set(hash, byId.get(holder)!);
    for (const c of claimers) if (c !== holder) refused.push({ hash, holder, claimer: c });
  }
  return { snapshot: { byHash, accounts: snap.accounts, contested }, refused };
}
