/**
 * The rehearsal's account (rehearsal.ts): one account in a store of its own, written in the
 * accounts file's format and parsed as the file store parses it, under a key made at random when
 * the thread starts and never written anywhere. Its grants pay a tip address of its own through
 * the transfer pattern, as a desk's tipped transfer does. Its rate-limit bucket is in the
 * rehearsal's own limiter (rehearsal.ts), so its id names no bucket of a real account.
 */
import { randomBytes } from 'node:crypto';
import { keySha256 } from '../accounts/keys.js';
import { fixedStore } from '../accounts/open-store.js';
import type { AccountStore } from '../accounts/types.js';

export interface RehearsalAccount {
  /** The key the rehearsal presents (X-Api-Key). */
  readonly key: string;
  /** The tip address its transfers pay (lower-case, 0x). */
  readonly tipAddress: string;
  /** The tip it pays, in wei: the grant's minimum. */
  readonly tipWei: bigint;
  readonly store: AccountStore;
}

const TIP_WEI = 1_000_000_000_000n;

/** The account and its store, with a grant on each of `chainIds`. */
export function rehearsalAccount(chainIds: readonly number[]): RehearsalAccount {
  const key = randomBytes(32).toString('hex');
  const tipAddress = `0x${randomBytes(20).toString('hex')}`;
  const store = fixedStore({
    accounts: [
      {
        id: 'rehearsal',
        keySha256: [keySha256(key)],
        grants: chainIds.map((chainId) => ({
          chainId,
          rateLimit: { perSecond: 1_000, burst: 1_000 },
          txTypes: [2],
          tipAddresses: [tipAddress],
          minTipWei: String(TIP_WEI),
          feePatterns: [{ kind: 'transfer' }],
        })),
      },
    ],
  });
  return { key, tipAddress, tipWei: TIP_WEI, store };
}
