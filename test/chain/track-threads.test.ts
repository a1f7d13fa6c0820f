/**
 * One tracker per process (docs/tracking.md#one-tracker-per-process), with two worker threads
 * (`workers` is the number of cores by default: 2 on the machines these tests run on) against a
 * real anvil: 20 submissions over HTTP, each on a new connection (spread over both threads by
 * the kernel), each status then asked on a new connection: 20 of 20 answered by the edge
 * (`source: "edge"`, with the acceptance's times); a lane subscription on one connection is told
 * of 20 of 20, each pushed pending then included, in order; the watcher's metrics are the
 * process's (one head). Without a subscription, a status asked right after each 200 finds it too.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { eventually, newKey } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { rpc, send } from '../support/http.js';
import { signNext } from '../support/txs.js';
import { useGate } from '../support/gate-fixture.js';
import { statusSubscription } from '../support/ws-client.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const key = newKey();
let anvil: Anvil;

const gate = useGate(async () => {
  anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
  return {
    chainB: false,
    sequencers: [anvil.url],
    accounts: [{ id: 'desk', keys: [key], allowUntipped: true }],
    internal: true,
    config: { allowUntipped: true, workers: 2, websocket: { enabled: true } },
    chainA: { rpc: anvil.url, track: { enabled: true, pollMs: 100 } },
  };
});
after(() => anvil.stop());

describe('one tracker per process (workers: 2)', () => {
  it('20 of 20 statuses over new connections from the edge; a lane subscription told of 20 of 20 submissions made on other connections', async () => {
    const { ws, pushed } = await statusSubscription(gate.port, key);

    const hashes: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await rpc(gate.port, 'eth_sendRawTransaction', [await signNext(anvil.url, 1 + (i % 4))], { key });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      hashes.push(r.json.result as string);
    }
    const sources = [];
    for (const hash of hashes) {
      const s = (await rpc(gate.port, 'txgate_getTransactionStatus', [hash], { key })).json.result;
      sources.push(s.source === 'edge' && typeof s.acceptedAt === 'number' ? 'edge' : JSON.stringify(s));
    }
    assert.deepEqual(sources, Array(20).fill('edge'));

    await eventually(() => hashes.every((h) => pushed().some((p) => p.hash === h && p.status === 'included')), 15_000).catch(() =>
      assert.fail(`told of ${new Set(pushed().map((p) => p.hash)).size} of 20`),
    );
    for (const h of hashes)
      assert.deepEqual(
        pushed()
          .filter((p) => p.hash === h)
          .map((p) => [p.status, p.version, p.source]),
        [
          ['pending', 1, 'edge'],
          ['included', 2, 'edge'],
        ],
        h,
      );
    ws.close();

    // One watcher in the process: its head is the chain's, once.
    const head = Number((await rpc(Number(new URL(anvil.url).port), 'eth_blockNumber', [])).json.result);
    await eventually(async () => {
      const m = (await send({ port: gate.internalPort!, method: 'GET', path: '/metrics' })).text;
      return m.includes(`txgate_track_head{chain="4663"} ${head}`) && /txgate_tracked\{chain="4663",state="final"\} 20\b/.test(m);
    }, 5_000);
  });

  it('without a subscription (the owner reads handed-over acceptances when asked, or at its next pass): each status asked right after its 200 answers from the edge, and each reaches included', async () => {
    const hashes: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await rpc(gate.port, 'eth_sendRawTransaction', [await signNext(anvil.url, 1 + (i % 4))], { key });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      const hash = r.json.result as string;
      hashes.push(hash);
      const s = (await rpc(gate.port, 'txgate_getTransactionStatus', [hash], { key })).json.result;
      assert.equal(s.source, 'edge', JSON.stringify(s));
    }
    await eventually(async () => {
      for (const h of hashes) if ((await rpc(gate.port, 'txgate_getTransactionStatus', [h], { key })).json.result.status !== 'included') return false;
      return true;
    }, 15_000);
  });
});
