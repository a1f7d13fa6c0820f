/**
 * Tracking against a hostile chain RPC: the readers fuzzed (nothing the chain RPC sends throws
 * or becomes a fact), a chain RPC answering garbage, one that stalls (the watcher is noticed
 * stalled, on /ready and in the metrics, and restarted), and a head subscription that sends
 * garbage and goes silent in front of a real anvil (transactions are still followed, by polling).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { WebSocketServer } from 'ws';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { findByNonce, readBlock, readReceipt, readSeen } from '../../src/track/blocks.js';
import { readBatch } from '../../src/upstreams/chain-rpc/chain-rpc.js';
import { eventually, newKey, startGate, type Gate } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { rpc, send } from '../support/http.js';
import { signNext } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const key = newKey();
const accounts = [{ id: 'desk', keys: [key], allowUntipped: true }];
const HASH = '0x' + '5a'.repeat(32);
const servers: Server[] = [];
const gates: Gate[] = [];
let anvil: Anvil;

/** An HTTP chain RPC answering every request with `answer` (or never, for null). */
async function chainRpc(answer: ((body: string) => string) | null): Promise<string> {
  const s = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (answer === null) return; // stalls: accepted, never answered
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer(body));
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  servers.push(s);
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

async function trackedGate(rpcUrl: string, extra: Record<string, unknown> = {}, sequencers = [anvil.url]): Promise<Gate> {
  const g = await startGate({
    chainB: false,
    sequencers,
    accounts,
    internal: true,
    config: { allowUntipped: true },
    chainA: { rpc: rpcUrl, track: { enabled: true, pollMs: 100, stallMs: 1000 }, ...extra },
  });
  gates.push(g);
  return g;
}

before(async () => {
  anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID, blockTime: 1 });
});
after(async () => {
  await Promise.all(gates.map((g) => g.stop()));
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
  await anvil.stop();
});

const anyJson = fc.jsonValue({ maxDepth: 4 });

describe('tracking: a hostile chain RPC', () => {
  it('the readers: any JSON (or text) gives a value or null, never a throw; one Answer per call', () => {
    fc.assert(
      fc.property(anyJson, fc.integer({ min: 0, max: 5 }), (v, n) => {
        readBlock(v, n);
        readReceipt(v, HASH);
        readSeen(v, HASH);
        findByNonce(v, '0x' + '11'.repeat(20), n);
        assert.equal(readBatch(JSON.stringify(v), n).length, n);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.integer({ min: 1, max: 4 }), (text, n) => {
        const got = readBatch(text, n);
        assert.equal(got.length, n);
      }),
    );
    // Repeated and foreign ids answer nothing twice; a lone error object fails every call.
    const got = readBatch('[{"id":0,"result":"0x1"},{"id":0,"result":"0x2"},{"id":7,"result":1},{"id":"1","result":2}]', 2);
    assert.deepEqual(got, [
      { kind: 'result', result: '0x1' },
      { kind: 'fault', why: 'no answer for this call', sent: true },
    ]);
    assert.deepEqual(readBatch('{"id":null,"error":{"code":-32600,"message":"batch not supported"}}', 2), [
      { kind: 'error', code: -32600, message: 'batch not supported', data: undefined },
      { kind: 'error', code: -32600, message: 'batch not supported', data: undefined },
    ]);
    assert.deepEqual(readBatch('{"error":{"message":"no code"}}', 1), [{ kind: 'fault', why: 'not a batch answer', sent: true }]);
    // A receipt of another hash, or a block of another number, is no answer.
    assert.equal(readReceipt({ transactionHash: '0x' + '00'.repeat(32), status: '0x1' }, HASH), null);
    assert.equal(readBlock({ number: '0x2', hash: HASH, parentHash: HASH, timestamp: '0x1', transactions: [] }, 3), null);
  });

  it('a chain RPC answering garbage: the watcher says so on /ready; a status it cannot read is 503 chain_unavailable; the process lives', async () => {
    let n = 0;
    const junk = ['not json', '[1,2,3]', '{"jsonrpc":"2.0"}', 'null', `[{"id":0,"result":{"number":"0xzz"}}]`, '"x"'.repeat(1000)];
    const g = await trackedGate(await chainRpc(() => junk[n++ % junk.length]!));
    const ready = await eventually(async () => {
      const r = await send({ port: g.internalPort!, method: 'GET', path: '/ready' });
      return r.text.includes('transaction watcher') ? r : null;
    }, 10_000);
    assert.equal(ready!.status, 200, 'a warning, not unready: submissions are unaffected');
    const r = await rpc(g.port, 'txgate_getTransactionStatus', [HASH], { key });
    assert.equal(r.status, 503);
    assert.deepEqual([r.json.error.data.reason, r.json.error.data.txHash], ['chain_unavailable', HASH]);
  });

  it("a chain RPC that stalls: the watcher is noticed stalled (metric, /ready) and restarted; the abandoned pass's calls are cut", async () => {
    // Calls the client cut before an answer (the stub never answers): an abandoned pass's, by its AbortSignal.
    let cut = 0;
    const s = createServer((req) => {
      req.resume();
      req.socket.once('close', () => cut++);
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    servers.push(s);
    const g = await trackedGate(`http://127.0.0.1:${(s.address() as AddressInfo).port}`);
    const tracker = g.app.trackers.get(DEV_CHAIN_ID)!;
    await eventually(() => tracker.watcher.stalled && tracker.watcher.restarts >= 2, 15_000);
    // The first pass was abandoned a stall ago: its call is cut then, not left to its own 5 s bound.
    await eventually(() => cut >= 1, 1_000).catch(() => assert.fail(`${cut} calls cut after ${tracker.watcher.restarts} restarts`));
    const metrics = (await send({ port: g.internalPort!, method: 'GET', path: '/metrics' })).text;
    assert.match(metrics, /txgate_track_watcher_stalled\{chain="4663"\} 1/);
    assert.match(metrics, /txgate_track_watcher_restarts_total\{chain="4663"\} [1-9]/);
    const ready = (await send({ port: g.internalPort!, method: 'GET', path: '/ready' })).text;
    assert.match(ready, /stalled/);
  });

  it('a head subscription sending garbage, then silent: transactions are still followed (polling)', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    wss.on('connection', (ws) => {
      ws.send('not json');
      ws.send(Buffer.alloc(2 << 20, 0x7b)); // 2 MiB of "{"
      ws.send('{"jsonrpc":"2.0","id":1,"result":{"not":"a subscription id"}}');
      ws.send('{"jsonrpc":"2.0","method":"eth_subscription","params":null}');
      ws.send('[]');
      // then nothing, ever
    });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    const wsUrl = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    const g = await trackedGate(anvil.url, { rpcWs: wsUrl }, [anvil.url]);
    const raw = await signNext(anvil.url, 1);
    const hash = (await rpc(g.port, 'eth_sendRawTransaction', [raw], { key })).json.result as string;
    await eventually(async () => (await rpc(g.port, 'txgate_getTransactionStatus', [hash], { key })).json.result.status === 'included', 15_000);
    for (const c of wss.clients) c.terminate();
    wss.close();
  });
});
