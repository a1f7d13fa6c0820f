/**
 * eth_sendRawTransactionSync in receipt mode (the plain send, then the receipt from the chain
 * RPC, polled or on each new head over rpcWs) against real anvil chains: one mining a block every
 * second, one that never mines. Forward mode: sync-send.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, http, keccak256 } from 'viem';
import { eventually, MIN_TIP, startGate, type Gate } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { send } from '../support/http.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { SYNC, syncCall, useSyncChains } from '../support/sync-chains.js';
import { signNext } from '../support/txs.js';

keysNeverLogged();

const chains = useSyncChains();
const { key } = chains.keys;
describe('eth_sendRawTransactionSync, receipt mode (plain send, then the chain RPC)', () => {
  let r: Gate;
  let rStuck: Gate;
  const plainAudits = (g: Gate, hash: string) => g.logs.filter((l) => l.includes('"audit":"forward"') && l.includes(hash));
  before(async () => {
    const config = { allowUntipped: true };
    const mode = { ...SYNC, mode: 'receipt', pollMs: 50 };
    r = await startGate({
      chainB: false,
      sequencers: [chains.mining.url],
      accounts: chains.accounts,
      config,
      internal: true,
      chainA: { rpc: chains.mining.url, sync: mode },
    });
    rStuck = await startGate({
      chainB: false,
      sequencers: [chains.stuck.url],
      accounts: chains.accounts,
      config,
      chainA: { rpc: chains.stuck.url, sync: { ...mode, maxWaitMs: 500 } },
    });
  });
  after(async () => {
    await Promise.all([r.stop(), rStuck.stop()]);
  });

  it('executed: the plain send is forwarded (its audit line), the receipt read from the chain RPC comes back in the one call, and is counted', async () => {
    const raw = await signNext(chains.mining.url, 6);
    const hash = keccak256(raw);
    const res = await syncCall(r, key, [raw]);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.result.transactionHash, hash);
    assert.equal(res.json.result.status, '0x1');
    const audit = plainAudits(r, hash);
    assert.equal(audit.length, 1);
    assert.doesNotMatch(audit[0]!, /eth_sendRawTransactionSync/, 'the sequencer was sent the plain method');
    const line = r.logs.find((l) => l.includes('"msg":"sync receipt"') && l.includes(hash));
    assert.ok(line !== undefined, 'a line for what the wait came to');
    assert.match(line, /"outcome":"accepted","status":"0x1","block":"0x[0-9a-f]+"/);
    const again = await syncCall(r, key, [raw]);
    assert.equal(again.json.result.transactionHash, hash, 'a resend is answered from the receipt');
    assert.equal(plainAudits(r, hash).length, 1, 'and not forwarded again');
    const metrics = (await send({ port: r.internalPort!, method: 'GET', path: '/metrics' })).text;
    assert.match(metrics, /txgate_sync_calls_total\{chain="4663",outcome="accepted"\} 2/);
    assert.match(metrics, /txgate_sync_wait_seconds_count\{chain="4663"\} 1/);
    assert.match(metrics, /txgate_sync_waiting\{chain="4663"\} 0/);
    assert.match(
      metrics,
      /txgate_requests_total\{method="eth_sendRawTransactionSync",status="200",reason="ok",transport="http"\} 2/,
      'the method has series of its own',
    );
  });

  it('accepted, no receipt within the wait: 202, code 4, data.txHash; the transaction is in the pool', async () => {
    const raw = await signNext(chains.stuck.url, 4);
    const res = await syncCall(rStuck, key, [raw, '0xea60']); // hex, capped by maxWaitMs (500)
    assert.equal(res.status, 202, JSON.stringify(res.json));
    assert.deepEqual([res.json.error.code, res.json.error.data.reason, res.json.error.data.txHash], [4, 'sync_timeout', keccak256(raw)]);
    const tx = await createPublicClient({ transport: http(chains.stuck.url) }).getTransaction({ hash: keccak256(raw) });
    assert.equal(tx.hash, keccak256(raw));
  });

  it("refused by the sequencer: the plain send's answer, nothing waited for", async () => {
    const first = await signNext(chains.mining.url, 3);
    assert.equal((await syncCall(r, key, [first])).status, 200);
    const clash = await signNext(chains.mining.url, 3, { nonce: 0, value: MIN_TIP + 1n });
    const res = await syncCall(r, key, [clash]);
    assert.equal(res.status, 200);
    assert.equal(res.json.error.data.reason, 'upstream_rejected');
  });

  it("with the chain RPC's WebSocket (rpcWs): the receipt is asked for on each new head, not on the interval", async () => {
    // pollMs past the wait: polling alone would ask once, right after the send (before the next
    // block), and answer 202; the head subscription asks again when the block comes.
    const wsUrl = chains.mining.url.replace(/^http/, 'ws');
    const g = await chains.gateOn(chains.mining, { rpc: chains.mining.url, rpcWs: wsUrl, sync: { ...SYNC, mode: 'receipt', pollMs: 5000, maxWaitMs: 4000 } });
    try {
      await eventually(() => g.logs.some((l) => l.includes('chain RPC head subscription live')));
      const raw = await signNext(chains.mining.url, 5);
      const res = await syncCall(g, key, [raw]);
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.equal(res.json.result.transactionHash, keccak256(raw));
    } finally {
      await g.stop();
    }
  });

  it('with rpcWs unreachable: polled every pollMs as without it (a subscription only ever speeds a receipt up)', async () => {
    const g = await chains.gateOn(chains.mining, {
      rpc: chains.mining.url,
      rpcWs: `ws://127.0.0.1:${await freePort()}/`,
      sync: { ...SYNC, mode: 'receipt', pollMs: 50 },
    });
    try {
      const raw = await signNext(chains.mining.url, 6);
      const res = await syncCall(g, key, [raw]);
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.equal(res.json.result.transactionHash, keccak256(raw));
      assert.ok(!g.logs.some((l) => l.includes('head subscription live')));
    } finally {
      await g.stop();
    }
  });

  it('drain: a call waiting for its receipt is answered at once, code 4 with its hash (not cut off at the grace period)', async () => {
    // A wait far past the grace period (2 s): without the drain's answer the call would be cut off.
    const g = await chains.gateOn(chains.stuck, { rpc: chains.stuck.url, sync: { ...SYNC, mode: 'receipt', maxWaitMs: 60_000 } });
    const raw = await signNext(chains.stuck.url, 5);
    const call = syncCall(g, key, [raw]);
    await eventually(() => g.logs.some((l) => l.includes('"audit":"forward"') && l.includes(keccak256(raw))));
    await g.stop();
    const res = await call;
    assert.equal(res.status, 202, JSON.stringify(res.json));
    assert.deepEqual([res.json.error.code, res.json.error.data.txHash], [4, keccak256(raw)]);
  });
});
