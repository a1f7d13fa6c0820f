/** What the stage unit tests share: two chains, three accounts, and a decoded transaction of any shape. */
import { parseAccounts } from '../../src/accounts/parse.js';
import type { Account, AccountStore } from '../../src/accounts/types.js';
import { buildChains, HostTable, type ChainRuntime } from '../../src/config/chains.js';
import { parseConfig } from '../../src/config/config.js';
import type { RpcRequest } from '../../src/pipeline/context.js';
import { keySha256 } from '../../src/accounts/keys.js';
import type { DecodedTx } from '../../src/tx/types.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

export const config = parseConfig(
  {
    chains: [
      { chainId: DEV_CHAIN_ID, hosts: ['fast.chain-a.example', 'localhost'], sequencers: ['http://127.0.0.1:9'] },
      { chainId: 10, hosts: ['b.example'], sequencers: ['http://127.0.0.1:9'] },
    ],
  },
  '/',
  {},
);
export const chains = buildChains(config);
export const hosts = new HostTable(chains);
/** The development chain (localhost) and chain 10 (b.example). */
export const chainA: ChainRuntime = chains[0]!;
export const chainB: ChainRuntime = chains[1]!;

export const TIP = '0xa0ee7a142d267c1f36714e4a8f75612f20a79720';
export const CALL_TO = '0x1111111111111111111111111111111111111111';

const doc = parseAccounts({
  accounts: [
    {
      id: 'a',
      keySha256: [keySha256('k1')],
      grants: [
        {
          chainId: DEV_CHAIN_ID,
          rateLimit: { perSecond: 1, burst: 2 },
          tipAddresses: [TIP],
          minTipWei: '100',
          feePatterns: [{ kind: 'transfer' }, { kind: 'call', to: CALL_TO, selector: '0xaabbccdd', receiverArg: 1, amountArg: 0 }],
        },
      ],
    },
    { id: 'off', keySha256: [keySha256('k2')], submissionEnabled: false, grants: [] },
    {
      id: 'free',
      keySha256: [keySha256('k3')],
      allowUntipped: true,
      grants: [{ chainId: DEV_CHAIN_ID, rateLimit: { perSecond: 1, burst: 1 }, tipAddresses: [], minTipWei: '0' }],
    },
    {
      id: 's',
      keySha256: [keySha256('k9')],
      grants: [
        {
          chainId: DEV_CHAIN_ID,
          rateLimit: { perSecond: 1, burst: 1 },
          tipAddresses: [],
          minTipWei: '0',
          senders: ['0x70997970C51812dc3A010C7d01b50e0d17dc79C8'],
        },
      ],
    },
  ],
});

/** A store over those accounts (keys k1, k2, k3, k9), loaded and fresh. */
export const store: AccountStore = {
  ready: true,
  stale: false,
  size: doc.accounts.length,
  byKeyHash: (h) => doc.byHash.get(h),
  start: async () => {},
  close: () => {},
};

export function account(id: 'a' | 'off' | 'free' | 's'): Account {
  return doc.accounts.find((a) => a.id === id)!;
}
/** An account's grant on the development chain. */
export const grantOf = (id: 'a' | 'free' | 's') => account(id).grants.get(DEV_CHAIN_ID)!;

/** A parsed request of that method (id 1). */
export const rpc = (method: string, params: readonly unknown[] = []): RpcRequest => ({ id: 1, idJson: '1', method, params, paramsHex: false });

/** A decoded EIP-1559 transaction of the development chain with the given fields (its sender: whatever `sender` gives). */
export function decoded(t: Partial<DecodedTx> = {}): DecodedTx {
  return {
    type: 2,
    hash: '0x',
    sender: () => '0x',
    chainId: BigInt(DEV_CHAIN_ID),
    nonce: 0n,
    to: null,
    value: 0n,
    data: new Uint8Array(),
    gasLimit: 21000n,
    ...t,
  };
}
