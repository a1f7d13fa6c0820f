/**
 * The client package's chain for its tests (test/chain/client-kit.test.ts,
 * client-adapters.test.ts): anvil (the development chain), a FaultProxy in front of it as the gate's one
 * sequencer, and a gate with four accounts, one key each (`keys`), started in a `before` hook
 * and stopped in an `after` hook, with the file's key check registered; the chain read directly
 * (`chainRpc`; transfers: txs.ts's `signNext` on `anvil.url`).
 */
import { after, before } from 'node:test';
import { createPublicClient, http, type PublicClient } from 'viem';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { freePort } from '../../src/base/free-port.js';
import { newKey, startGate, type Gate } from './harness.js';
import { anvilChain } from './txs.js';
import { keysNeverLogged } from './gate-fixture.js';
import { FaultProxy } from './fault-proxy.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

export interface ClientChain {
  readonly keys: {
    /** Untipped allowed, generous rate. */
    readonly key: string;
    /** Tips required. */
    readonly strictKey: string;
    /** Burst 1. */
    readonly slowKey: string;
    /** Burst 1, 2 per second. */
    readonly crowdKey: string;
  };
  /** These four are there from the first test on (the `before` hook started them). */
  readonly anvil: Anvil;
  readonly proxy: FaultProxy;
  readonly gate: Gate;
  /** The gate's URL. */
  readonly base: string;
  /** anvil read directly (not through the gate). */
  chainRpc(): PublicClient;
}

const chainClient = (url: string): PublicClient => createPublicClient({ chain: anvilChain(url, DEV_CHAIN_ID), transport: http(url) }) as PublicClient;

/** The file's client chain (see the file's head). */
export function useClientChain(): ClientChain {
  keysNeverLogged();
  const keys = { key: newKey(), strictKey: newKey(), slowKey: newKey(), crowdKey: newKey() };
  let parts: { anvil: Anvil; proxy: FaultProxy; gate: Gate } | undefined;
  const started = () => {
    if (parts === undefined) throw new Error('useClientChain: the chain is started in a before hook; it was read before it ran');
    return parts;
  };
  before(async () => {
    const anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
    const proxy = await new FaultProxy(anvil.url).start();
    const gate = await startGate({
      chainB: false,
      sequencers: [proxy.url],
      accounts: [
        { id: 'kit', keys: [keys.key], allowUntipped: true, grants: [{ rateLimit: { perSecond: 1000, burst: 1000 } }] },
        { id: 'strict', keys: [keys.strictKey] },
        { id: 'slow', keys: [keys.slowKey], grants: [{ rateLimit: { perSecond: 0.001, burst: 1 } }] },
        { id: 'crowd', keys: [keys.crowdKey], allowUntipped: true, grants: [{ rateLimit: { perSecond: 2, burst: 1 } }] },
      ],
      config: { allowUntipped: true },
    });
    parts = { anvil, proxy, gate };
  });
  after(async () => {
    await parts?.gate.stop();
    await parts?.proxy.stop();
    await parts?.anvil.stop();
  });
  const chain: ClientChain = {
    keys,
    get anvil() {
      return started().anvil;
    },
    get proxy() {
      return started().proxy;
    },
    get gate() {
      return started().gate;
    },
    get base() {
      return `http://127.0.0.1:${started().gate.port}`;
    },
    chainRpc: () => chainClient(started().anvil.url),
  };
  return chain;
}
