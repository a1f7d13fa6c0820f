/**
 * The WebSocket transport's gate for its tests (test/e2e/ws-transport.test.ts,
 * ws-transport-keys.test.ts): the options for the file's `useGate` (`gateOptions`: a stub
 * sequencer of the file's own, started first and stopped after the file's tests; the transport
 * on, `WS`; four accounts, `keys`: granted the development chain untipped, granted it tipped, submissions
 * off, untipped without a grant list), and transfers at fresh nonces (`tx`).
 */
import { after } from 'node:test';
import type { Hex } from 'viem';
import { type AccountIn, type GateOptions, newKey } from './harness.js';
import { StubSequencer } from './stub-sequencer.js';
import { sign1559 } from './txs.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

/** The `websocket` section the file's gate runs with. */
export const WS = { enabled: true, maxInFlight: 64, maxConnectionsPerAccount: 2 };

export interface WsParts {
  readonly keys: { readonly key: string; readonly other: string; readonly disabled: string; readonly capped: string };
  readonly accounts: AccountIn[];
  /** For `useGate`: starts the stub, then names it. */
  gateOptions(): Promise<GateOptions>;
  /** The gate's sequencer (from the first test on). */
  readonly stub: StubSequencer;
  /** A transfer by SIGNERS[signer] at the next of the file's nonces (from 50,000). */
  tx(signer?: number): Promise<Hex>;
}

/** The file's parts (see the file's head). */
export function wsTransportParts(): WsParts {
  const keys = { key: newKey(), other: newKey(), disabled: newKey(), capped: newKey() };
  const accounts: AccountIn[] = [
    { id: 'mm', keys: [keys.key], allowUntipped: true, grants: [{ chainId: DEV_CHAIN_ID }] },
    // No grant for chain 10.
    { id: 'other', keys: [keys.other], grants: [{ chainId: DEV_CHAIN_ID }] },
    { id: 'off', keys: [keys.disabled], submissionEnabled: false },
    { id: 'capped', keys: [keys.capped], allowUntipped: true },
  ];
  let stub: StubSequencer | undefined;
  after(async () => {
    await stub?.stop();
  });
  let nonce = 50_000;
  return {
    keys,
    accounts,
    async gateOptions() {
      stub = await new StubSequencer().start();
      return { sequencers: [stub.url], accounts, config: { websocket: WS }, internal: true };
    },
    get stub() {
      if (stub === undefined) throw new Error("wsTransportParts: the stub is started by the gate's before hook; it was read before it ran");
      return stub;
    },
    tx: (signer = 0) => sign1559({ signer, nonce: nonce++ }),
  };
}
