/**
 * No peer input ends the edge or makes an answer lie: every reader of what upstreams send
 * (the forward's answers, the sync send's, the receipt poll's, the lookup's, the health
 * probe's, the chain RPC's head subscription frames) is fed arbitrary values, frames and HTTP
 * answers. The gate runs in this process: a throw out of any reader would end the test run.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import fc from 'fast-check';
import { WebSocketServer } from 'ws';
import { peerText, preview, readLookup, readPlain } from '../../src/forward/answer.js';
import { interpret } from '../../src/upstreams/http/http-upstream.js';
import { ChainRpc, readBatch } from '../../src/upstreams/chain-rpc/chain-rpc.js';
import { address, hash32, hexData, quantity } from '../../src/base/rpc-values.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Answer } from '../../src/upstreams/upstream.js';
import { parseFrame, readHead } from '../../src/upstreams/chain-rpc/chain-heads.js';
import { readSync, readSyncResend } from '../../src/sync/sync-send.js';
import { eventually, newKey, startGate, stubChain, type Gate } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { type Behaviour, StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';

keysNeverLogged();

const HASH = '0x' + 'ab'.repeat(32);
const DEEP = '['.repeat(200_000) + ']'.repeat(200_000);
const deepValue = (): unknown => JSON.parse(DEEP);

describe('readers of upstream answers never throw', () => {
  it('interpret: any status and any body', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 999 }),
        fc.oneof(fc.string(), fc.json(), fc.constant(DEEP), fc.constant('{"result":{"toString":1,"valueOf":1}}')),
        (status, text) => {
          const a = interpret(status, text);
          assert.ok(a.kind === 'result' || a.kind === 'error' || a.kind === 'fault');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('the chain RPC client: a batch answer of any text, and the value parsers of anything, never throw', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.constant(DEEP)), fc.integer({ min: 1, max: 5 }), (text, n) => {
        const got = readBatch(text, n);
        assert.equal(got.length, n);
        for (const a of got) assert.ok(a.kind === 'result' || a.kind === 'error' || a.kind === 'fault');
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.string(), fc.constant('0x' + 'f'.repeat(14)), fc.constant('0x20000000000000')), (v) => {
        const q = quantity(v);
        assert.ok(q === null || Number.isSafeInteger(q));
        hash32(v);
        address(v);
        hexData(v);
      }),
      { numRuns: 1000 },
    );
    // The safe-integer check: 2^53 is refused, 2^53 - 1 read.
    assert.equal(quantity('0x20000000000000'), null);
    assert.equal(quantity('0x1fffffffffffff'), Number.MAX_SAFE_INTEGER);
  });

  it('the chain RPC client against a hostile HTTP peer (garbage, 500, too large, stall, closed, cancelled): one Answer per call, never a throw', async () => {
    let mode = 'garbage';
    const server: Server = createServer((req, res) => {
      req.resume();
      if (mode === 'garbage') res.end('<html>');
      else if (mode === '500') res.writeHead(500).end('');
      else if (mode === 'large') res.end('['.padEnd(40 << 20, ' '));
      else if (mode === 'closed') req.socket.destroy();
      else if (mode === 'lies') res.end('[{"id":0,"result":"0x1"},{"id":0,"result":"0x2"},{"id":9,"result":1}]');
      // 'stall', 'cancel': never answered
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const c = new ChainRpc(`http://user:secret@127.0.0.1:${(server.address() as AddressInfo).port}`, 2);
    try {
      for (const m of ['garbage', '500', 'large', 'closed', 'stall', 'lies', 'cancel']) {
        mode = m;
        const cancel = new AbortController();
        if (m === 'cancel') setTimeout(() => cancel.abort(), 50);
        const o = { timeoutMs: m === 'cancel' ? 60_000 : 300, signal: cancel.signal };
        const one = await c.one('eth_blockNumber', [], o);
        const many = await c.batch(
          [
            { method: 'eth_blockNumber', params: [] },
            { method: 'eth_chainId', params: [] },
          ],
          o,
        );
        assert.equal(many.length, 2, m);
        for (const a of [one, ...many]) {
          // Only the one call a lying batch answered by its id is a result; repeated and foreign ids answer nothing.
          assert.equal(a.kind === 'result', m === 'lies' && a === many[0], m);
          if (a.kind === 'fault') assert.doesNotMatch(a.why, /secret/, m);
        }
        if (m === 'cancel') assert.deepEqual(one, { kind: 'fault', why: 'cancelled', sent: true });
        if (m === 'stall') assert.match((one as { why: string }).why, /timeout/);
      }
    } finally {
      await c.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it("the chain RPC client's call (the Upstream shape) is cancelled by its signal as one and batch are: a fault, 'cancelled', at once when already ended", async () => {
    // A peer that never answers: only the signal ends the call (its bound is a minute).
    const server: Server = createServer((req) => req.resume());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const c = new ChainRpc(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 2);
    const times = { timeoutMs: 60_000, queueMs: 1_000 };
    try {
      const cancel = new AbortController();
      const answer = c.call('eth_blockNumber', '[]', times, cancel.signal);
      setTimeout(() => cancel.abort(), 50);
      assert.deepEqual(await answer, { kind: 'fault', why: 'cancelled', sent: true });
      assert.deepEqual(await c.call('eth_blockNumber', '[]', times, AbortSignal.abort()), { kind: 'fault', why: 'cancelled', sent: true });
      // Without a signal the bound alone ends it, as before.
      assert.match(((await c.call('eth_blockNumber', '[]', { timeoutMs: 100, queueMs: 100 })) as { why: string }).why, /timeout/);
    } finally {
      await c.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('the readings of a send, a sync send, a resend and a lookup: any JSON value, however nested', () => {
    const values = fc.oneof(fc.jsonValue(), fc.anything(), fc.constant({ toString: 1, valueOf: 1 }), fc.constant(null));
    fc.assert(
      fc.property(values, fc.integer(), fc.oneof(fc.string(), fc.constant('already known')), (v, code, message) => {
        const answers: Answer[] = [
          { kind: 'result', result: v },
          { kind: 'error', code, message, data: v },
        ];
        for (const a of answers) {
          readPlain(a, HASH);
          readSync(a, HASH);
          readSyncResend(a, HASH);
          readLookup(a, HASH);
        }
        preview(v);
        peerText(v);
      }),
      { numRuns: 500 },
    );
    const deep = deepValue();
    for (const a of [
      { kind: 'result', result: deep },
      { kind: 'error', code: 1, message: 'x', data: deep },
      { kind: 'result', result: { transactionHash: HASH, status: deep, logs: deep } },
    ] as Answer[]) {
      readPlain(a, HASH);
      // A receipt that cannot be written again is not passed on as one (no 200 with null).
      const r = readSync(a, HASH);
      if (r.kind === 'accepted') assert.ok(!r.exit.body('1').includes('"result":null'));
      readLookup(a, HASH);
    }
    assert.equal(typeof preview(deep), 'string');
  });

  it('parseFrame: any frame', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.uint8Array().map((b) => b.buffer),
        ),
        (f) => {
          const m = parseFrame(f);
          assert.ok(m === null || (typeof m === 'object' && !Array.isArray(m)));
          if (m !== null) readHead(m);
        },
      ),
      { numRuns: 500 },
    );
    for (const f of [DEEP, 'null', '1', '[]', 'x'.repeat(2 << 20), new Uint8Array([0xff, 0xfe, 0x00])]) parseFrame(f);
  });

  it('readHead: any notification gives a head of safe integers and a hash, or null', () => {
    const q = fc.oneof(fc.anything(), fc.constant('0x10'), fc.constant('0x20000000000000'));
    const head = fc.record({ number: q, hash: fc.oneof(fc.anything(), fc.constant(HASH)), timestamp: q }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.record({ params: fc.oneof(fc.anything(), fc.record({ result: fc.oneof(head, fc.anything()) })) })), (m) => {
        const h = typeof m === 'object' && m !== null ? readHead(m as { params?: unknown }) : null;
        if (h !== null) assert.ok(Number.isSafeInteger(h.number) && Number.isSafeInteger(h.timestamp) && h.hash === HASH);
      }),
      { numRuns: 2000 },
    );
    assert.deepEqual(readHead({ params: { result: { number: '0x10', hash: HASH, timestamp: '0x5' } } })?.number, 16);
    assert.equal(readHead({ params: { result: { number: '0x20000000000000', hash: HASH, timestamp: '0x5' } } }), null);
  });
});

const key = newKey();
const accounts = [{ id: 'mm', keys: [key], grants: [{ rateLimit: { perSecond: 1e6, burst: 1e6 }, sync: true }] }];
let nonce = 120_000;
const next = () => sign1559({ nonce: nonce++ });
const open: { gates: Gate[]; stubs: StubSequencer[]; servers: WebSocketServer[] } = { gates: [], stubs: [], servers: [] };
afterEach(async () => {
  for (const g of open.gates.splice(0)) await g.stop();
  for (const s of open.stubs.splice(0)) await s.stop();
  for (const w of open.servers.splice(0)) await new Promise((r) => w.close(() => r(undefined)));
});
/** Frames a hostile chain RPC may send on the head subscription. */
const FRAMES: Array<string | Buffer> = [
  'null',
  'true',
  '1',
  '"x"',
  '[]',
  '[null]',
  '{}',
  '{"id":1,"error":null}',
  '{"id":1,"error":{"message":{"toString":1}}}',
  '{"toString":1,"valueOf":1}',
  '{"method":{"toString":1}}',
  '{"__proto__":{"method":"eth_subscription"}}',
  DEEP,
  'x'.repeat(2 << 20),
  Buffer.from([0xff, 0x00, 0xfe, 0x80]),
  '{"id":1,"result":"0x1"}',
  '{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x1","result":null}}',
  'null',
];

describe('hostile upstreams: the edge stays up and every answer stays true', () => {
  it('the chain RPC WebSocket sends any frame (a "null" first, garbage after the subscription): the process stays up, sync calls still answer', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    open.servers.push(wss);
    let connections = 0;
    wss.on('connection', (ws) => {
      connections++;
      ws.on('error', () => {});
      for (const f of FRAMES) ws.send(f);
    });
    await new Promise((r) => wss.once('listening', r));
    const port = (wss.address() as { port: number }).port;
    const stub = await new StubSequencer().start();
    open.stubs.push(stub);
    stub.behaviour = (c) => (c.method === 'eth_getTransactionReceipt' ? { kind: 'result', result: null } : { kind: 'accept' });
    const gate = await startGate({
      accounts,
      config: {
        chains: [
          stubChain([stub.url], {}, { rpc: stub.url, rpcWs: `ws://127.0.0.1:${port}`, sync: { enabled: true, mode: 'receipt', maxWaitMs: 300, pollMs: 20 } }),
        ],
      },
    });
    open.gates.push(gate);
    // Every frame delivered at least twice (the subscription re-opened after the connection was closed).
    for (let i = 0; i < 100 && connections < 2; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(connections >= 2, 'the subscription was re-made');
    const raw = await next();
    const r = await rpc(gate.port, 'eth_sendRawTransactionSync', [raw], { key });
    assert.equal(r.status, 202, JSON.stringify(r.json));
    assert.equal(r.json.error.data.txHash, txHash(raw));
    assert.equal((await send({ port: gate.port, method: 'GET', path: '/health', host: 'localhost' })).status, 200);
  });

  const BODIES: Array<[string, Behaviour]> = [
    ['null', { kind: 'http', status: 200, body: 'null' }],
    ['a deep array', { kind: 'http', status: 200, body: DEEP }],
    ['a result that throws when printed', { kind: 'http', status: 200, body: '{"jsonrpc":"2.0","id":1,"result":{"toString":1,"valueOf":1}}' }],
    ['an error whose message is an object', { kind: 'http', status: 200, body: '{"jsonrpc":"2.0","id":1,"error":{"code":4,"message":{"x":1}}}' }],
    [
      'an error with deep data',
      { kind: 'http', status: 200, body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"already known","data":${DEEP}}}` },
    ],
    ['HTML', { kind: 'http', status: 200, body: '<html>', contentType: 'text/html' }],
    ['a 2 MB body', { kind: 'http', status: 200, body: 'x'.repeat(2 << 20) }],
    ['a 503', { kind: 'http', status: 503, body: '' }],
    ['a receipt of another transaction', { kind: 'result', result: { transactionHash: '0x' + '11'.repeat(32), status: '0x1' } }],
    ['a lying hash', { kind: 'result', result: '0x' + '11'.repeat(32) }],
  ];

  for (const mode of ['forward', 'receipt'] as const) {
    it(`every reader fed garbage (sends, lookups, probes, receipts; sync ${mode} mode): one true answer per request, never an acceptance, the process up`, async () => {
      const stub = await new StubSequencer().start();
      open.stubs.push(stub);
      const gate = await startGate({
        accounts,
        config: {
          chains: [
            stubChain(
              [stub.url],
              { timeoutMs: 200 },
              { ...(mode === 'receipt' ? { rpc: stub.url } : {}), sync: { enabled: true, mode, maxWaitMs: 200, pollMs: 20 } },
            ),
          ],
        },
      });
      open.gates.push(gate);
      for (const [what, b] of BODIES) {
        stub.behaviour = () => b;
        stub.lookupBehaviour = () => b;
        for (const method of ['eth_sendRawTransaction', 'eth_sendRawTransactionSync']) {
          const raw = await next();
          const r = await rpc(gate.port, method, [raw], { key });
          assert.equal(r.json?.result, undefined, `${what}, ${method}: ${JSON.stringify(r.json)}`);
          assert.notEqual(r.status, 202, `${what}, ${method}`);
          assert.ok([200, 502, 503].includes(r.status), `${what}, ${method}: ${r.status}`);
          if (r.status === 200) assert.equal(r.json.error.data.reason, 'upstream_rejected', what);
        }
      }
      stub.behaviour = () => ({ kind: 'accept' });
      stub.lookupBehaviour = null;
      // The health probe (every 100 ms) fed each garbage answer in turn: the sequencer is down, never the process.
      for (const [, b] of BODIES) {
        stub.chainIdBehaviour = () => b;
        await eventually(() => gate.logs.some((l) => l.includes('"msg":"sequencer down"')));
      }
      stub.chainIdBehaviour = null;
      const raw = await next();
      const ok = await eventually(async () => {
        const r = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
        return r.json?.result === txHash(raw);
      });
      assert.ok(ok);
      assert.equal((await send({ port: gate.port, method: 'GET', path: '/health', host: 'localhost' })).status, 200);
    });
  }
});
