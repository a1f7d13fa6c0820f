/**
 * The WebSocket transport against a real anvil: hundreds in flight on one connection, the client kit
 * and both adapters (viem, ethers) over ws://, and the kit when its connection drops (a stand-in
 * server injecting the fault). The lane itself: test/e2e/ws-transport.test.ts.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { WebSocketServer } from 'ws';
import { Wallet, JsonRpcProvider } from 'ethers';
import { createPublicClient, createWalletClient, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ANVIL_KEYS, startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { connectTxgate } from '../../packages/client/src/index.js';
import { TxgateProvider } from '../../packages/client/src/ethers.js';
import { txgate } from '../../packages/client/src/viem.js';
import { eventually, MIN_TIP, newKey, TIP } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { LOCAL_FEES, pendingNonce, sign1559, SIGNERS, signNext, anvilChain } from '../support/txs.js';
import { useGate } from '../support/gate-fixture.js';
import { txHash } from '../support/stub-sequencer.js';
import { connected } from '../support/ws-client.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const key = newKey();
const WS = { enabled: true, maxInFlight: 64, maxConnectionsPerAccount: 2 };
let nonce = 50_000;
const tx = (signer = 0) => sign1559({ signer, nonce: nonce++ });

describe('the WebSocket transport against anvil, with the client kit and both adapters', () => {
  let anvil: Anvil;
  const k = newKey();

  const g = useGate(async () => {
    anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
    return {
      chainB: false,
      sequencers: [anvil.url],
      accounts: [{ id: 'mm', keys: [k], allowUntipped: true }],
      config: { allowUntipped: true, websocket: { ...WS, maxInFlight: 512 } },
    };
  });
  after(async () => {
    await anvil.stop();
  });

  it('hundreds in flight on one connection: all accepted by anvil and mined', async () => {
    const chainRpc = createPublicClient({ transport: http(anvil.url) });
    // 300 senders funded on the chain, one transaction each: no nonce depends on another, so
    // the order the forwards reach anvil in cannot leave one waiting behind a gap.
    const senders = Array.from({ length: 300 }, () => privateKeyToAccount(generatePrivateKey()));
    for (const a of senders) await chainRpc.request({ method: 'anvil_setBalance' as never, params: [a.address, '0x56bc75e2d63100000'] as never });
    const raws = await Promise.all(senders.map((a) => sign1559({ account: a, nonce: 0, ...LOCAL_FEES })));
    const c = await connected(g.port, k);
    try {
      const answers = await Promise.all(raws.map((raw, i) => c.call('eth_sendRawTransaction', [raw], i)));
      for (const [i, a] of answers.entries()) assert.equal(a.result, txHash(raws[i]!), JSON.stringify(a));
      for (const raw of raws) assert.equal((await chainRpc.waitForTransactionReceipt({ hash: txHash(raw) as Hex, timeout: 20_000 })).status, 'success');
    } finally {
      c.ws.close();
    }
  });

  it('the client kit over ws://: connect checks the chain id, submitAndWait is mined, many submissions share one connection', async () => {
    const gate = await connectTxgate({ url: `ws://127.0.0.1:${g.port}`, apiKey: k, chainId: DEV_CHAIN_ID, chainRpcUrl: anvil.url });
    try {
      const base = await pendingNonce(anvil.url, 0);
      const raws = await Promise.all(Array.from({ length: 20 }, (_, i) => signNext(anvil.url, 0, { nonce: base + i })));
      const outs = await Promise.all(raws.map((r) => gate.submit(r)));
      assert.deepEqual(
        outs.map((o) => o.kind),
        raws.map(() => 'accepted'),
      );
      // The 20 went in flight together, so anvil may hold one above a gap for a later block:
      // the next one is signed by another sender.
      const more = await signNext(anvil.url, 1);
      const mined = await gate.submitAndWait(more, { timeoutMs: 20_000 });
      assert.equal(mined.kind, 'mined', JSON.stringify(mined));
      const opens = g.logs.filter((l) => l.includes('"msg":"websocket open"') && l.includes('"account":"mm"')).length;
      assert.ok(opens >= 1);
      const tips = await gate.tipAddresses();
      assert.ok(Array.isArray(tips.tipAddresses), 'GET /tip-addresses still over HTTP');
    } finally {
      await gate.close();
    }
  });

  it("the kit over ws:// with an unknown key: connect fails with the upgrade refusal's reason (unauthorized), not unreachable", async () => {
    const gate = await connectTxgate({ url: `ws://127.0.0.1:${g.port}`, apiKey: 'txg_wrong', chainId: DEV_CHAIN_ID, chainRpcUrl: anvil.url }).catch(
      (e: Error) => e,
    );
    // eth_chainId goes over the connection too: the upgrade's 401 is the answer.
    assert.ok(gate instanceof Error);
    assert.equal((gate as { reason?: string }).reason, 'unauthorized');
  });

  it('viem: txgate({ url: "ws://…" }) sends through the lane; sendTransaction works unmodified and is mined', async () => {
    const account = SIGNERS[1]!;
    const wallet = createWalletClient({
      account,
      chain: anvilChain(anvil.url),
      transport: txgate({ url: `ws://127.0.0.1:${g.port}`, apiKey: k, rpc: anvil.url }),
    });
    const hash = await wallet.sendTransaction({ to: TIP as Hex, value: MIN_TIP, chain: anvilChain(anvil.url) });
    const receipt = await createPublicClient({ transport: http(anvil.url) }).waitForTransactionReceipt({ hash, timeout: 20_000 });
    assert.equal(receipt.status, 'success');
  });

  it('ethers: TxgateProvider({ url: "ws://…" }) sends through the lane; wallet.sendTransaction and tx.wait() work', async () => {
    const provider = new TxgateProvider({ url: `ws://127.0.0.1:${g.port}`, apiKey: k, rpc: anvil.url, chainId: DEV_CHAIN_ID, pollingInterval: 200 });
    try {
      const wallet = new Wallet(ANVIL_KEYS[2]!, provider);
      const sent = await wallet.sendTransaction({ to: TIP, value: MIN_TIP });
      const receipt = await sent.wait(1, 20_000);
      assert.equal(receipt?.status, 1);
      assert.ok(
        g.logs.some((l) => l.includes(sent.hash) && l.includes('"reqId":"') && /"reqId":"[^"]+\.[0-9a-z]+"/.test(l)),
        'logged as a frame of a connection',
      );
    } finally {
      provider.destroy();
    }
    void JsonRpcProvider;
  });
});

describe('the kit over ws:// when the connection drops (a stand-in server injecting the fault)', () => {
  it('a call in flight on a dropped connection is uncertain (it was written), the link reopens with backoff, and the next call is answered', async () => {
    let connections = 0;
    const stand = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    stand.on('connection', (ws, req) => {
      connections++;
      assert.equal(req.headers['x-api-key'], key, 'the key goes in the upgrade header');
      assert.ok(!(req.url ?? '').includes(key), 'never in the URL');
      ws.on('message', (d) => {
        const m = JSON.parse(d.toString()) as { id: number; method: string; params: string[] };
        if (m.method === 'eth_chainId') return ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: '0x1237' }));
        // The first submission: cut the connection after reading it, unanswered.
        if (connections === 1) return ws.terminate();
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: txHash(m.params[0]!) }));
      });
    });
    await new Promise((r) => stand.once('listening', r));
    const port = (stand.address() as { port: number }).port;
    const kit = await connectTxgate({ url: `ws://127.0.0.1:${port}`, apiKey: key, chainId: DEV_CHAIN_ID, chainRpcUrl: 'http://127.0.0.1:9', keepAliveMs: 0 });
    try {
      const raw = await tx();
      const first = await kit.submit(raw);
      assert.equal(first.kind, 'uncertain', JSON.stringify(first));
      const again = await eventually(async () => {
        const o = await kit.submit(raw);
        return o.kind === 'accepted' ? o : undefined;
      });
      assert.equal(again!.hash, txHash(raw));
      assert.equal(connections, 2, 'one reconnect');
    } finally {
      await kit.close();
      stand.close();
    }
  });
});
