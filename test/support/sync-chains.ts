/**
 * The sync send's chains for its tests (test/chain/sync-send.test.ts, sync-receipt.test.ts): two
 * anvils of the development chain, one mining a block every second (`mining`), one that never mines
 * (`stuck`), started in a `before` hook and stopped in an `after` hook, with the file's key
 * check registered; three accounts (`keys`: sync granted, not granted, sync with one token), a
 * gate in front of one anvil (`gateOn`), and a sync call (transfers: txs.ts's `signNext`).
 */
import { after, before } from 'node:test';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { freePort } from '../../src/base/free-port.js';
import { type AccountIn, newKey, startGate, type Gate } from './harness.js';
import { rpc } from './http.js';
import { keysNeverLogged } from './gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

/** Chain A's sync section: anvil takes the transaction alone. */
export const SYNC = { enabled: true, maxWaitMs: 3000, syncTimeoutFormat: 'omit' };

export interface SyncChains {
  readonly keys: {
    /** A grant with sync. */
    readonly key: string;
    /** A grant without sync. */
    readonly plain: string;
    /** Sync, one token refilled once in 1,000 s: a second one spent shows as 429. */
    readonly tight: string;
  };
  /** The three accounts, for a gate's `accounts`. */
  readonly accounts: AccountIn[];
  /** There from the first test on (the `before` hook started them). */
  readonly mining: Anvil;
  readonly stuck: Anvil;
  /** A txgate in front of one anvil, chain A's settings (its sync and chain RPC) as given. */
  gateOn(a: Anvil, chainA: Record<string, unknown>): Promise<Gate>;
}

/** The file's two chains (see the file's head). */
export function useSyncChains(): SyncChains {
  keysNeverLogged();
  const keys = { key: newKey(), plain: newKey(), tight: newKey() };
  const accounts: AccountIn[] = [
    { id: 'sync', keys: [keys.key], allowUntipped: true, grants: [{ sync: true }] },
    { id: 'plain', keys: [keys.plain], allowUntipped: true },
    { id: 'tight', keys: [keys.tight], allowUntipped: true, grants: [{ sync: true, rateLimit: { perSecond: 0.001, burst: 1 } }] },
  ];
  let anvils: { mining: Anvil; stuck: Anvil } | undefined;
  const started = () => {
    if (anvils === undefined) throw new Error('useSyncChains: the anvils are started in a before hook; one was read before it ran');
    return anvils;
  };
  before(async () => {
    const mining = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID, blockTime: 1 });
    const stuck = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID, extraArgs: ['--no-mining'] });
    anvils = { mining, stuck };
  });
  after(async () => {
    if (anvils !== undefined) await Promise.all([anvils.mining.stop(), anvils.stuck.stop()]);
  });
  return {
    keys,
    accounts,
    get mining() {
      return started().mining;
    },
    get stuck() {
      return started().stuck;
    },
    gateOn: (a, chainA) => startGate({ chainB: false, sequencers: [a.url], accounts, config: { allowUntipped: true }, chainA }),
  };
}

/** eth_sendRawTransactionSync to gate `g` with key `k`. */
export const syncCall = (g: Gate, k: string, params: unknown[]) => rpc(g.port, 'eth_sendRawTransactionSync', params, { key: k });
