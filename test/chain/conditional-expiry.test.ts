/**
 * A conditional transaction followed to `expired` on a tracked chain (docs/conditional.md,
 * docs/tracking.md): accepted by the test's conditional sequencer and held out of every block
 * (its `hold` mode), against a real anvil that mines only when told. The block that passes its
 * bound makes it `expired` (with the bound), asked over HTTP and pushed on the WebSocket transport,
 * while the chain is still at that block (within one block of the bound); a rollback below the
 * bound brings it back to `pending`, and the next block past it expires it again.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createPublicClient, http, keccak256 } from 'viem';
import type { Anvil } from '../../src/dev/anvil.js';
import { openLink } from '../../packages/client/src/link.js';
import { EdgeStatus, finalOnEdge } from '../../packages/client/src/status.js';
import { Calls, type Via } from '../support/conditional-calls.js';
import type { ConditionalSequencer } from '../../src/dev/conditional-sequencer/server.js';
import { startConditionalChain } from '../support/conditional-sequencer.js';
import { useGate } from '../support/gate-fixture.js';
import { eventually, MIN_TIP, newKey } from '../support/harness.js';
import { signNext } from '../support/txs.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const desk = newKey();
const METHOD = 'eth_sendRawTransactionConditional';

let anvil: Anvil;
let seq: ConditionalSequencer;
const gate = useGate(async () => {
  ({ anvil, seq } = await startConditionalChain(0, ['--no-mining']));
  seq.mode = 'hold';
  return {
    chainB: false,
    sequencers: [seq.url],
    config: { allowUntipped: true, websocket: { enabled: true } },
    accounts: [{ id: 'desk', keys: [desk], allowUntipped: true, grants: [{ conditional: true }] }],
    chainA: { rpc: anvil.url, track: { enabled: true, pollMs: 50 }, conditional: { enabled: true, headPollMs: 50 } },
  };
});
const calls = new Calls(() => gate.port);
after(async () => {
  calls.close();
  await seq?.close();
  await anvil?.stop();
});

const anvilCall = async (method: string, params: unknown[] = []): Promise<unknown> => {
  const r = await fetch(anvil.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await r.json()) as { result: unknown }).result;
};
const head = async () => createPublicClient({ transport: http(anvil.url) }).getBlock({ blockTag: 'latest' });
const mine = () => anvilCall('anvil_mine', ['0x1']);
/** The tracker has applied the chain's head (its watcher's last block). */
const watched = async () => {
  const n = Number((await head()).number);
  await eventually(() => gate.app.trackers.get(DEV_CHAIN_ID)!.watcher.head === n, 5_000);
  return n;
};
let n = 0;
const fresh = () => signNext(anvil.url, 3, { value: MIN_TIP + BigInt(++n) });

for (const via of ['http', 'ws'] as Via[]) {
  describe(`a quote that expires unincluded, over ${via}`, () => {
    const status = async (hash: string) =>
      (await calls.call(via, desk, 'txgate_getTransactionStatus', [hash])).result as { status: string; expiredBy: unknown; final: boolean };

    it('blockNumberMax: pending up to its bound, expired at the first block past it (the chain still there), back to pending below it after a rollback, expired again', async () => {
      if (via === 'ws') assert.ok((await calls.call(via, desk, 'txgate_subscribe', ['transactionStatus'])).result);
      const h = Number(await watched());
      const raw = await fresh();
      const hash = keccak256(raw);
      const r = await calls.call(via, desk, METHOD, [raw, { blockNumberMax: `0x${(h + 1).toString(16)}` }]);
      assert.equal(r.result, hash, JSON.stringify(r));
      await mine(); // h + 1: the bound itself, still live
      await watched();
      assert.equal((await status(hash)).status, 'pending');
      const snapshot = await anvilCall('evm_snapshot');
      await mine(); // h + 2: past the bound, without the transaction
      const past = await watched();
      const expired = await eventually(async () => {
        const s = await status(hash);
        return s.status === 'expired' ? s : null;
      }, 5_000);
      assert.equal(expired!.final, true);
      assert.deepEqual(expired!.expiredBy, { bound: 'blockNumberMax', head: h + 2 });
      assert.equal(Number((await head()).number), past, 'reported while the chain is at the first block past the bound');
      await anvilCall('evm_revert', [snapshot]);
      await eventually(async () => (await status(hash)).status === 'pending', 5_000);
      await mine();
      await eventually(async () => (await status(hash)).status === 'expired', 5_000);
      assert.deepEqual(carriedMethods(hash), [METHOD]);
      // The client's wait on a tracked chain ends with it (packages/client/src/status.ts).
      const link = openLink(`${via}://localhost:${gate.port}`, desk, { connectTimeoutMs: 2000, timeoutMs: 5000 });
      try {
        const out = await finalOnEdge(new EdgeStatus(link), hash, performance.now() + 5000, async () => null);
        assert.deepEqual(out, { kind: 'expired', hash, expiredBy: { bound: 'blockNumberMax', head: h + 2 } });
      } finally {
        await link.close();
      }
      if (via === 'ws') {
        await eventually(() => calls.pushed.filter((p) => p.hash === hash).length >= 4, 5_000);
        assert.deepEqual(
          calls.pushed.filter((p) => p.hash === hash).map((p) => p.status),
          ['pending', 'expired', 'pending', 'expired'],
        );
      }
    });

    it('timestampMax: expired once a block later than it is canonical', async () => {
      const h = await head();
      await watched();
      const raw = await fresh();
      const hash = keccak256(raw);
      const bound = h.timestamp + 100n;
      assert.equal((await calls.call(via, desk, METHOD, [raw, { timestampMax: `0x${bound.toString(16)}` }])).result, hash);
      await anvilCall('evm_setNextBlockTimestamp', [`0x${bound.toString(16)}`]);
      await mine(); // at the bound: live
      await watched();
      assert.equal((await status(hash)).status, 'pending');
      await anvilCall('evm_setNextBlockTimestamp', [`0x${(bound + 1n).toString(16)}`]);
      await mine();
      await watched();
      const s = await eventually(async () => {
        const x = await status(hash);
        return x.status === 'expired' ? x : null;
      }, 5_000);
      assert.equal((s!.expiredBy as { bound: string }).bound, 'timestampMax');
    });
  });
}

const carriedMethods = (hash: string) => seq.calls.filter((c) => c.hash === hash).map((c) => c.method);
