/**
 * The WebSocket transport (config `websocket`, off by default): the upgrade's refusals, one JSON-RPC
 * request per frame through the same stages, answers by id in completion order with
 * `data.status`, the per-connection bounds (a stub sequencer makes answers overtake each other
 * and injects faults). Keys, pings and drain: ws-transport-keys.test.ts; the client kit and both
 * adapters over it against anvil: test/chain/ws-transport-kit.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectTxgate, TxgateError } from '../../packages/client/src/index.js';
import { eventually, newKey, startGate } from '../support/harness.js';
import { send } from '../support/http.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { useGate } from '../support/gate-fixture.js';
import { connected, open } from '../support/ws-client.js';
import { WS, wsTransportParts } from '../support/ws-gate.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const ws = wsTransportParts();
const gate = useGate(ws.gateOptions);
const { tx, accounts: ACCOUNTS } = ws;
const { key, other, disabled, capped } = ws.keys;

describe('the WebSocket transport: off by default', () => {
  it('with websocket off, an upgrade gets what it gets today (405 on GET /), and no ws series exist', async () => {
    const off = await startGate({ sequencers: [ws.stub.url], accounts: ACCOUNTS });
    try {
      const o = await open(off.port, key);
      assert.equal(o.kind, 'refused');
      assert.equal((o as { status: number }).status, 405);
      const err = (o as unknown as { body: { error: { message: string; data: { reason: string; setting?: string } } } }).body.error;
      assert.equal(err.data.reason, 'method_not_allowed', 'the reason stays');
      assert.equal(err.data.setting, 'websocket.enabled');
      assert.match(err.message, /WebSocket transport is off.*websocket\.enabled/);
      // The kit says it: the upgrade's refusal, its message naming the setting.
      const kitErr = await connectTxgate({ url: `ws://localhost:${off.port}`, apiKey: key, chainId: DEV_CHAIN_ID, chainRpcUrl: ws.stub.url }).then(
        async (g) => void (await g.close()),
        (x: unknown) => x,
      );
      assert.ok(kitErr instanceof TxgateError, String(kitErr));
      assert.equal(kitErr.reason, 'method_not_allowed');
      assert.match(kitErr.message, /websocket\.enabled/);
      // A plain GET / is the plain 405 still.
      const plainGet = await send({ port: off.port, method: 'GET' });
      assert.equal(plainGet.status, 405);
      assert.equal(plainGet.json.error.data.reason, 'method_not_allowed');
      assert.doesNotMatch(plainGet.text, /websocket/i);
      const names = off.app.metrics!.snapshot().map((m) => m.name);
      assert.ok(names.includes('txgate_requests_total'));
      assert.ok(!names.includes('txgate_ws_connections') && !names.includes('txgate_ws_closes_total'), names.join());
      const series = off.app.metrics!.snapshot().find((m) => m.name === 'txgate_requests_total')!.values;
      assert.ok(!series.some((v) => v.labels.transport === 'ws'), 'no ws request series');
    } finally {
      await off.stop();
    }
  });
});

describe('the WebSocket transport: the upgrade', () => {
  it('refuses as HTTP does: 421 for an unknown host, 401 without or with an unknown key, 403 for a disabled account or a chain not granted', async () => {
    const cases: [string | null, string, number, string][] = [
      [key, 'nowhere.example', 421, 'misdirected_host'],
      [null, 'localhost', 401, 'unauthorized'],
      ['txg_not_a_key', 'localhost', 401, 'unauthorized'],
      [disabled, 'localhost', 403, 'submission_disabled'],
      [other, 'fast.chain-b.example', 403, 'chain_not_granted'],
    ];
    for (const [k, host, status, reason] of cases) {
      const o = await open(gate.port, k, host);
      assert.equal(o.kind, 'refused', `${host} ${reason}`);
      const r = o as { status: number; body: { error: { data: { reason: string } } } };
      assert.equal(r.status, status, reason);
      assert.equal(r.body.error.data.reason, reason);
    }
  });

  it('caps open connections per account: 429 too_many_connections, and a closed one frees its place', async () => {
    const a = await connected(gate.port, capped);
    const b = await connected(gate.port, capped);
    const third = await open(gate.port, capped);
    assert.equal(third.kind, 'refused');
    assert.equal((third as { status: number }).status, 429);
    const err = (third as unknown as { body: { error: { message: string; data: Record<string, unknown> } } }).body.error;
    assert.deepEqual(err.data, { reason: 'too_many_connections', limit: 2, setting: 'websocket.maxConnectionsPerAccount' });
    assert.match(err.message, /at most 2 on this edge \(websocket\.maxConnectionsPerAccount\)/);
    a.ws.close();
    await a.closed;
    const again = await connected(gate.port, capped);
    for (const c of [b, again]) c.ws.close();
    await Promise.all([b.closed, again.closed]);
  });
});

describe('the WebSocket transport: frames', () => {
  it('eth_chainId and a submission are answered as over HTTP; every error carries data.reason and data.status', async () => {
    const c = await connected(gate.port, key);
    try {
      assert.deepEqual(await c.call('eth_chainId', [], 'k'), { jsonrpc: '2.0', id: 'k', result: '0x1237' });
      const raw = await tx();
      const ok = await c.call('eth_sendRawTransaction', [raw]);
      assert.equal(ok.result, txHash(raw));
      const bad = await c.call('eth_sendRawTransaction', ['0x02zz']);
      assert.equal(bad.error?.data.reason, 'invalid_params');
      assert.equal(bad.error?.data.status, 400);
      const unknown = await c.call('eth_getBalance', []);
      assert.deepEqual([unknown.error?.data.reason, unknown.error?.data.status, unknown.error?.code], ['method_not_found', 400, -32601]);
      // Not JSON: answered with id null (there is no id to match), the connection stays open.
      c.ws.send('{"jsonrpc":"2.0","id":7,');
      const parse = await c.next();
      assert.deepEqual([parse.id, parse.error?.data.reason, parse.error?.data.status], [null, 'parse_error', 400]);
      c.ws.send(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }]));
      assert.equal((await c.next()).error?.data.reason, 'batch_not_supported');
      c.ws.send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'eth_chainId' })), { binary: true });
      assert.equal((await c.next()).error?.data.reason, 'unsupported_content_type');
      assert.equal((await c.call('eth_chainId')).result, '0x1237', 'still open');
    } finally {
      c.ws.close();
    }
  });

  it('many in flight on one connection: every answer matched by its id, in completion order (not request order)', async () => {
    const c = await connected(gate.port, key);
    // The stub holds each submission for a different time, so later ones overtake earlier ones.
    ws.stub.delayOf = (call) => (parseInt(txHash(String(call.params[0])).slice(-2), 16) % 40) * 2;
    try {
      const raws = await Promise.all(Array.from({ length: 60 }, () => tx(1)));
      const answers = await Promise.all(raws.map((raw, i) => c.call('eth_sendRawTransaction', [raw], 1000 + i)));
      answers.forEach((a, i) => {
        assert.equal(a.id, 1000 + i);
        assert.equal(a.result, txHash(raws[i]!));
      });
      const order = c.answers.map((a) => a.id as number);
      assert.notDeepEqual(
        order,
        [...order].sort((x, y) => x - y),
        'answers arrived in request order: nothing overtook',
      );
    } finally {
      ws.stub.delayOf = null;
      c.ws.close();
    }
  });

  it('beyond websocket.maxInFlight a frame is answered overloaded (503, its id), and nothing is sent for it', async () => {
    const g = await startGate({ sequencers: [ws.stub.url], accounts: ACCOUNTS, config: { websocket: { ...WS, maxInFlight: 3 } } });
    const c = await connected(g.port, key);
    ws.stub.delayMs = 300;
    const before = ws.stub.sends().length;
    try {
      const raws = await Promise.all(Array.from({ length: 6 }, () => tx(2)));
      const answers = await Promise.all(raws.map((raw, i) => c.call('eth_sendRawTransaction', [raw], i)));
      const overloaded = answers.filter((a) => a.error?.data.reason === 'overloaded');
      assert.equal(overloaded.length, 3);
      for (const a of overloaded) {
        assert.equal(a.error?.data.status, 503);
        assert.deepEqual([a.error?.data.limit, a.error?.data.setting], [3, 'websocket.maxInFlight'], 'the cap named');
        assert.match(String(a.error?.message), /at most 3 \(websocket\.maxInFlight\)/);
      }
      assert.deepEqual(
        answers.filter((a) => a.result !== undefined).map((a) => a.id),
        [0, 1, 2],
      );
      assert.equal(ws.stub.sends().length - before, 3, 'the overloaded ones were never sent');
    } finally {
      ws.stub.delayMs = 0;
      c.ws.close();
      await g.stop();
    }
  });

  it('a sequencer fault mid-flight: 502 upstream_error (uncertain: it was written) vs 503 upstream_unavailable (never sent), as over HTTP', async () => {
    const faulty = await new StubSequencer().start();
    const g = await startGate({ sequencers: [faulty.url], accounts: ACCOUNTS, config: { websocket: WS } });
    const c = await connected(g.port, key);
    try {
      faulty.behaviour = () => ({ kind: 'destroy' });
      const cut = await c.call('eth_sendRawTransaction', [await tx()]);
      assert.deepEqual([cut.error?.data.reason, cut.error?.data.status], ['upstream_error', 502]);
      assert.equal(typeof cut.error?.data.txHash, 'string');
      await faulty.stop(); // no sequencer at all: never sent
      const none = await eventually(async () => {
        const a = await c.call('eth_sendRawTransaction', [await tx()]);
        return a.error?.data.reason === 'upstream_unavailable' ? a : undefined;
      });
      assert.equal(none!.error?.data.status, 503);
    } finally {
      c.ws.close();
      await g.stop();
    }
  });

  it('a frame over limits.maxBodyBytes is answered 413 payload_too_large by its id (nothing sent); far over it, the connection is dropped', async () => {
    const g = await startGate({ sequencers: [ws.stub.url], accounts: ACCOUNTS, config: { websocket: WS, limits: { maxBodyBytes: 1024 } } });
    const c = await connected(g.port, key);
    try {
      const big = await c.call('eth_sendRawTransaction', ['0x' + 'ab'.repeat(1000)], 'big');
      assert.deepEqual([big.id, big.error?.data.reason, big.error?.data.status], ['big', 'payload_too_large', 413]);
      assert.deepEqual([big.error?.data.limitBytes, big.error?.data.setting], [1024, 'limits.maxBodyBytes'], 'the frame cap named as over HTTP');
      assert.match(String(big.error?.message), /size limit of 1024 bytes \(limits\.maxBodyBytes\)/);
      assert.equal((await c.call('eth_chainId')).result, '0x1237', 'still open');
      c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: ['0x' + 'ab'.repeat(5000)] }));
      assert.equal((await c.closed).code, 1006);
    } finally {
      await g.stop();
    }
  });

  it('a client that does not read its answers: refused overloaded past half the backpressure limit, then closed 1013 when an answer cannot be queued', async () => {
    const g = await startGate({
      sequencers: [ws.stub.url],
      accounts: ACCOUNTS,
      config: { websocket: { ...WS, maxBackpressureBytes: 64 << 10 } },
      internal: true,
    });
    const c = await connected(g.port, key);
    const socket = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    try {
      socket.pause(); // reads nothing: the answers pile up in the kernel, then in uWS
      // eth_chainId over 512 bytes is answered 413 with its id: an 8-kB id makes every answer
      // 8 kB, so the buffer steps past half the 64-kB limit (then overloaded) before past it.
      const sent = 3000;
      for (let i = 0; i < sent; i++) c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: `${i}:${'x'.repeat(8_000)}`, method: 'eth_chainId', params: [] }));
      const closedLine = (await eventually(() => g.logs.find((l) => l.includes('"msg":"websocket closed"')), 20_000)) as string;
      assert.match(closedLine, /"code":1013/);
      socket.resume();
      await c.closed;
      const ids = c.answers.map((a) => String(a.id).split(':')[0]);
      assert.ok(c.answers.length < sent, `${c.answers.length} of ${sent} answered: the rest were lost with the connection, which says so by closing`);
      assert.equal(new Set(ids).size, ids.length, 'no answer twice');
      const reasons = new Set(c.answers.map((a) => a.error?.data.reason));
      assert.ok(reasons.has('payload_too_large'), 'answered while the buffer had room');
      assert.ok(reasons.has('overloaded'), 'refused overloaded past half the limit, before the close');
      const scrape = await send({ port: g.internalPort!, method: 'GET', path: '/metrics' });
      assert.match(scrape.text, /txgate_ws_closes_total\{code="1013"\} 1/);
    } finally {
      c.ws.terminate();
      await g.stop();
    }
  });

  it('a connection dropped by the client with submissions in flight: each is logged with its outcome as closed unanswered', async () => {
    const c = await connected(gate.port, key);
    ws.stub.delayMs = 300;
    try {
      const raw = await tx();
      c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }));
      await eventually(() => ws.stub.sends().some((s) => s.params[0] === raw));
      c.ws.terminate();
      const line = (await eventually(() => gate.logs.find((l) => l.includes('closed unanswered') && l.includes(txHash(raw))))) as string;
      // Written to the sequencer and accepted: the outcome is in the line, nobody received it.
      assert.match(line, /"us":/);
      assert.doesNotMatch(line, /"reason"/);
      assert.ok(gate.logs.some((l) => l.includes('"msg":"websocket closed"') && l.includes('"inFlight":1')));
    } finally {
      ws.stub.delayMs = 0;
    }
  });

  it('the rate limit spends the same bucket over HTTP and WebSocket', async () => {
    const limited = newKey();
    const g = await startGate({
      sequencers: [ws.stub.url],
      accounts: [{ id: 'lim', keys: [limited], allowUntipped: true, grants: [{ rateLimit: { perSecond: 0.001, burst: 2 } }] }],
      config: { websocket: WS },
    });
    const c = await connected(g.port, limited);
    try {
      const overHttp = await send({
        port: g.port,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [await tx()] }),
        headers: { 'x-api-key': limited, 'content-type': 'application/json' },
      });
      assert.equal(overHttp.status, 200);
      assert.ok((await c.call('eth_sendRawTransaction', [await tx()])).result);
      const third = await c.call('eth_sendRawTransaction', [await tx()]);
      assert.deepEqual([third.error?.data.reason, third.error?.data.status], ['rate_limited', 429]);
      assert.equal(typeof third.error?.data.retryAfterMs, 'number');
    } finally {
      c.ws.close();
      await g.stop();
    }
  });
});
