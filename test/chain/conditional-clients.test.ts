/**
 * The client package's conditional send (docs/conditional.md#clients) against a real anvil behind
 * the test's conditional sequencer: the kit's `submitConditional` over HTTP and the WebSocket
 * lane, and the method passed through the viem transport and the ethers provider, with -32003
 * (unmet at the sequencer, or a bound the edge saw passed) and -32005 (past the edge's cap) in
 * each library's error model.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createPublicClient, http, keccak256, type Hex } from 'viem';
import { TxgateProvider } from '../../packages/client/src/ethers.js';
import { connectTxgate } from '../../packages/client/src/index.js';
import { TxgateRejectedError, txgate, txgateReason } from '../../packages/client/src/viem.js';
import type { Anvil } from '../../src/dev/anvil.js';
import type { ConditionalSequencer } from '../../src/dev/conditional-sequencer/server.js';
import { startConditionalChain } from '../support/conditional-sequencer.js';
import { useGate } from '../support/gate-fixture.js';
import { eventually, MIN_TIP, newKey, TIP } from '../support/harness.js';
import { signNext } from '../support/txs.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const desk = newKey();
const METHOD = 'eth_sendRawTransactionConditional';
const ONE = `0x${'0'.repeat(63)}1`;
const ZERO = `0x${'0'.repeat(64)}`;

let anvil: Anvil;
let seq: ConditionalSequencer;
const gate = useGate(async () => {
  ({ anvil, seq } = await startConditionalChain(5));
  return {
    chainB: false,
    sequencers: [seq.url],
    config: { allowUntipped: true, websocket: { enabled: true } },
    accounts: [{ id: 'desk', keys: [desk], allowUntipped: true, grants: [{ conditional: true }] }],
    chainA: { rpc: anvil.url, conditional: { enabled: true, maxCost: 4, headPollMs: 50 } },
  };
});
after(async () => {
  await seq?.close();
  await anvil?.stop();
});

let n = 0;
const fresh = () => signNext(anvil.url, 4, { value: MIN_TIP + BigInt(++n) });
const met = { knownAccounts: { [TIP]: { [ZERO]: ZERO } } };
const unmet = { knownAccounts: { [TIP]: { [ZERO]: ONE } } };
/** 3 accounts with a slot each: 6, past the cap of 4. */
const costly = { knownAccounts: Object.fromEntries(['0x01', '0x02', '0x03'].map((a) => [`0x${a.slice(2).padStart(40, '0')}`, { [ZERO]: ZERO }])) };
const passed = async () => {
  const head = await createPublicClient({ transport: http(anvil.url) }).getBlockNumber();
  const bound = { blockNumberMax: `0x${(head - 1n).toString(16)}` };
  // The edge's head poll has the head once a probe (other bytes) is refused at the edge.
  const probe = await fresh();
  const at = `http://localhost:${gate.port}`;
  await eventually(async () => {
    const r = await fetch(at, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': desk },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: METHOD, params: [probe, bound] }),
    });
    return ((await r.json()) as { error?: { data?: { reason?: string } } }).error?.data?.reason === 'conditions_expired';
  }, 10_000);
  return bound;
};

describe('the kit: submitConditional', () => {
  for (const scheme of ['http', 'ws']) {
    it(`over ${scheme}: accepted; unmet (the sequencer's -32003), expired (-32003 at the edge), too costly (-32005) as rejected outcomes`, async () => {
      const kit = await connectTxgate({ url: `${scheme}://localhost:${gate.port}`, apiKey: desk, chainId: DEV_CHAIN_ID, chainRpcUrl: anvil.url });
      try {
        const raw = await fresh();
        const ok = await kit.submitConditional(raw, met);
        assert.deepEqual(ok, { kind: 'accepted', hash: keccak256(raw) });
        const cases: [unknown, string, number][] = [
          [unmet, 'upstream_rejected', -32003],
          [await passed(), 'conditions_expired', -32003],
          [costly, 'conditions_too_costly', -32005],
        ];
        for (const [options, reason, code] of cases) {
          const out = await kit.submitConditional(await fresh(), options as never);
          assert.equal(out.kind, 'rejected', JSON.stringify(out));
          assert.equal(out.kind === 'rejected' && out.reason, reason);
          assert.equal(out.kind === 'rejected' && out.code, code);
        }
      } finally {
        await kit.close();
      }
    });
  }
});

describe('the adapters pass the method through', () => {
  it('viem: client.request returns the hash; a refusal throws TxgateRejectedError with the reason and the JSON-RPC code in its cause', async () => {
    const transport = txgate({ url: `http://localhost:${gate.port}`, apiKey: desk, rpc: anvil.url });
    const client = createPublicClient({ transport });
    try {
      const raw = await fresh();
      const request = (params: unknown[]) => client.request({ method: METHOD, params } as never) as Promise<unknown>;
      assert.equal(await request([raw, met]), keccak256(raw));
      for (const [options, reason, code] of [
        [unmet, 'upstream_rejected', -32003],
        [costly, 'conditions_too_costly', -32005],
      ] as const) {
        const err = await request([await fresh(), options]).then(
          () => assert.fail('accepted'),
          (e: unknown) => e,
        );
        assert.ok(err instanceof TxgateRejectedError, String(err));
        assert.equal(txgateReason(err), reason);
        assert.equal((err as TxgateRejectedError).rpcCode, code);
      }
      assert.deepEqual(
        seq.calls.filter((c) => c.method !== METHOD),
        [],
        'nothing sent plain',
      );
    } finally {
      await transport.close();
    }
  });

  it('ethers: provider.send returns the hash; a refusal rejects with the reason and the JSON-RPC error', async () => {
    const provider = new TxgateProvider({ url: `http://localhost:${gate.port}`, apiKey: desk, rpc: anvil.url, chainId: DEV_CHAIN_ID });
    try {
      const raw = (await fresh()) as Hex;
      assert.equal(await provider.send(METHOD, [raw, met]), keccak256(raw));
      for (const [options, reason, code] of [
        [unmet, 'upstream_rejected', -32003],
        [await passed(), 'conditions_expired', -32003],
        [costly, 'conditions_too_costly', -32005],
      ] as const) {
        const err = await provider.send(METHOD, [await fresh(), options]).then(
          () => assert.fail('accepted'),
          (e: unknown) => e as { error?: { code: number } },
        );
        assert.equal(txgateReason(err), reason);
        assert.equal(err.error?.code, code);
      }
    } finally {
      await provider.close();
    }
  });
});
