/**
 * Forwarding under load and faults against stub sequencers: fanout with a failing observer,
 * duplicate suppression, load shedding, sequencer health, a client that leaves, and exactly one
 * answer per request. The outcomes of one forward, failover and fanout: forward-faults.test.ts.
 */
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/config.js';
import { ChainDuplicates } from '../../src/forward/dedup.js';
import { ChainLink } from '../../src/forward/chain-link.js';
import { ChainForwarder } from '../../src/forward/forwarder.js';
import { Later } from '../../src/pipeline/later.js';
import { ConditionalSend } from '../../src/forward/conditional-send.js';
import { HealthBoard } from '../../src/health/board.js';
import { HttpUpstream } from '../../src/upstreams/http/http-upstream.js';
import { initCrypto } from '../../src/base/native.js';
import { eventually, newKey, startGate, type Gate } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { useStubGates } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const key = newKey();
const accounts = [{ id: 'mm', keys: [key], grants: [{ rateLimit: { perSecond: 1e6, burst: 1e6 } }] }];
let nonce = 0;
const next = () => sign1559({ nonce: nonce++ });

const setup = useStubGates({ accounts });
const submit = (gate: Gate, raw: string, id: unknown = 1) => rpc(gate.port, 'eth_sendRawTransaction', [raw], { key, id });
const audit = (gate: Gate) => gate.logs.map((l) => JSON.parse(l)).filter((l) => l.audit === 'forward');

describe('fanout with a failing observer (direct)', () => {
  // A throwing metrics observer must neither leave a request unanswered nor end the process
  // with an unhandled rejection (fanout's attempts run detached from the request's promise).
  const failing = {
    forward() {
      throw new Error('observer failed');
    },
  };
  const forwarderOver = (stubs: StubSequencer[], strategy: 'fanout' | 'failover' = 'fanout', observer: object = failing) => {
    const cfg = parseConfig(
      { chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: stubs.map((s) => s.url), forward: { strategy, timeoutMs: 1000 } }] },
      '/',
      {},
    );
    const link = new ChainLink({
      chain: cfg.chains[0]!,
      board: HealthBoard.allocate(stubs.length),
      slots: stubs.map((_, i) => i),
      log: pino({ level: 'silent' }),
      observer,
    });
    return new ChainForwarder(link, new ChainDuplicates({ acceptedTtlMs: 0, maxEntries: 10 }), observer);
  };
  const request = (raw: string) => ({ hash: txHash(raw), rawHex: raw, account: 'mm', reqId: 't-1', sender: null });
  let rejections = 0;
  const count = () => rejections++;
  before(async () => {
    await initCrypto();
    process.on('unhandledRejection', count);
  });
  after(() => process.off('unhandledRejection', count));

  it('an answer path that throws once the forward concluded: the same bytes joined meanwhile still get the acceptance, and nothing rejects unhandled', async () => {
    const stubs = [await new StubSequencer().start()];
    setup.open.stubs.push(...stubs);
    const f = forwarderOver(stubs, 'failover', {});
    const raw = await next();
    const out = f.forward(request(raw));
    const joined = f.forward(request(raw));
    assert.ok(out instanceof Later && joined instanceof Promise, 'its own forward a Later, the joiner its promise');
    out.on(() => {
      throw new Error('answer path failed');
    });
    assert.equal((await joined).reason, 'ok');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(rejections, 0);
    await f.close();
  });
  it('an in-flight metrics hook that throws as the forward concludes: the request is still answered, its joiner too, and nothing rejects unhandled', async () => {
    const stubs = [await new StubSequencer().start()];
    setup.open.stubs.push(...stubs);
    let calls = 0;
    const f = forwarderOver(stubs, 'failover', {
      inFlight() {
        // Entering passes; leaving (the conclusion's bookkeeping) throws, once.
        if (++calls === 2) throw new Error('in-flight hook failed');
      },
    });
    const raw = await next();
    const out = f.forward(request(raw));
    const joined = f.forward(request(raw));
    assert.ok(out instanceof Later && joined instanceof Promise);
    assert.equal((await out).reason, 'ok', 'the request answered with the acceptance');
    assert.equal((await joined).reason, 'ok');
    // The duplicates table heard the outcome all the same: the same bytes again are not joined to the concluded forward.
    const again = f.forward(request(raw));
    assert.ok(!(again instanceof Promise), 'not joined to the concluded forward');
    assert.equal((await again).reason, 'ok');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(rejections, 0);
    await f.close();
  });
  it('an in-flight metrics hook that throws on every call, as a place is taken too: every forward is answered, its place given back, and the bytes again are not joined', async () => {
    const stubs = [await new StubSequencer().start()];
    setup.open.stubs.push(...stubs);
    const f = forwarderOver(stubs, 'failover', {
      inFlight() {
        throw new Error('in-flight hook failed');
      },
    });
    const raw = await next();
    const out = f.forward(request(raw));
    assert.ok(out instanceof Later, 'sent, not refused by the hook');
    assert.equal((await out).reason, 'ok');
    const again = f.forward(request(raw));
    assert.ok(!(again instanceof Promise), 'not joined to the concluded forward');
    assert.equal((await again).reason, 'ok');
    // Every place given back: a forward of other bytes is sent, not refused as overloaded.
    assert.equal((await f.forward(request(await next()))).reason, 'ok');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(rejections, 0);
    await f.close();
  });

  it('an acceptance still answers 200, and every attempt is settled', async () => {
    const stubs = await Promise.all([new StubSequencer().start(), new StubSequencer().start()]);
    setup.open.stubs.push(...stubs);
    const f = forwarderOver(stubs);
    const raw = await next();
    const exit = await f.forward(request(raw));
    assert.equal(exit.reason, 'ok');
    await eventually(() => stubs.every((s) => s.sends().length === 1));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(rejections, 0);
    await f.close();
  });
  it('all failing still answers (502 uncertain)', async () => {
    const stubs = await Promise.all([new StubSequencer().start(), new StubSequencer().start()]);
    setup.open.stubs.push(...stubs);
    for (const s of stubs) s.behaviour = () => ({ kind: 'http', status: 500, body: '' });
    const f = forwarderOver(stubs);
    const exit = await f.forward(request(await next()));
    assert.equal(exit.reason, 'upstream_error');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(rejections, 0);
    await f.close();
  });
  it('failover: a written sequencer resolved while the next is asked still answers, and ends no process', async () => {
    const stubs = await Promise.all([new StubSequencer().start(), new StubSequencer().start()]);
    setup.open.stubs.push(...stubs);
    // The first faults after the write and its lookup then finds the bytes, while the second takes its time.
    stubs[0]!.behaviour = () => ({ kind: 'http', status: 500, body: '' });
    stubs[0]!.knownTx = (hash) => ({ hash });
    stubs[1]!.delayMs = 200;
    const f = forwarderOver(stubs, 'failover');
    const exit = await f.forward(request(await next()));
    assert.equal(exit.reason, 'ok');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(rejections, 0);
    await f.close();
  });
});

describe('duplicates, shedding, health', () => {
  it('identical bytes in flight share one forward; accepted ones are answered without a second forward', async () => {
    const { gate, stubs } = await setup(1);
    stubs[0]!.delayMs = 150;
    const raw = await next();
    const rs = await Promise.all([submit(gate, raw, 1), submit(gate, raw, 2), submit(gate, raw, 3)]);
    assert.deepEqual(
      rs.map((r) => [r.json.id, r.json.result]),
      [1, 2, 3].map((id) => [id, txHash(raw)]),
    );
    assert.equal(stubs[0]!.sends().length, 1);
    const again = await submit(gate, raw, 4);
    assert.equal(again.json.result, txHash(raw));
    assert.equal(stubs[0]!.sends().length, 1);
  });
  it('dedup window 0 disables the accepted cache', async () => {
    const { gate, stubs } = await setup(1, {}, {}, { dedup: { acceptedTtlMs: 0 } });
    const raw = await next();
    await submit(gate, raw);
    await submit(gate, raw);
    assert.equal(stubs[0]!.sends().length, 2);
  });
  it('beyond maxInFlight → 503 overloaded at once, never a queue', async () => {
    const { gate, stubs } = await setup(1, { maxInFlight: 2, timeoutMs: 1000 });
    stubs[0]!.delayMs = 300;
    const raws = await Promise.all([0, 1, 2, 3].map(() => next()));
    const rs = await Promise.all(raws.map((raw) => submit(gate, raw)));
    const statuses = rs.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 200, 503, 503]);
    for (const r of rs.filter((x) => x.status === 503)) assert.equal(r.json.error.data.reason, 'overloaded');
    assert.equal(stubs[0]!.sends().length, 2);
  });
  it('a sequencer that is down → 503 upstream_unavailable and /ready 503 naming the chain; back → ready', async () => {
    const { gate, stubs } = await setup(1);
    const port = stubs[0]!.port;
    await stubs[0]!.stop();
    setup.open.stubs.splice(setup.open.stubs.indexOf(stubs[0]!), 1);
    await eventually(async () => (await send({ port: gate.port, method: 'GET', path: '/ready' })).status === 503, 2000);
    const ready = await send({ port: gate.port, method: 'GET', path: '/ready' });
    assert.equal(ready.json.status, 'not_ready');
    assert.match(ready.json.notReady.join(' '), /chain 4663: no healthy sequencer/);
    const r = await submit(gate, await next());
    assert.equal(r.status, 503);
    assert.equal(r.json.error.data.reason, 'upstream_unavailable');
    const back = await new StubSequencer().start(port);
    setup.open.stubs.push(back);
    await eventually(async () => (await send({ port: gate.port, method: 'GET', path: '/ready' })).status === 200, 3000);
    const raw = await next();
    assert.equal((await submit(gate, raw)).json.result, txHash(raw));
  });
  it('a burst larger than the pool: every answer definite (200 seen by the sequencer, or 503 never sent), zero 502', async () => {
    // 4 connections, a 500-ms sequencer, at most 700 ms to get a connection: two rounds of 4 are
    // written, the rest cannot be and are refused unsent. The answer timeout (2 s) measures the
    // sequencer only, so time queued for a connection never turns into "uncertain".
    const { gate, stubs } = await setup(1, { connections: 4, queueMs: 700, timeoutMs: 2000 });
    stubs[0]!.delayMs = 500;
    const raws = await Promise.all(Array.from({ length: 24 }, () => next()));
    const rs = await Promise.all(raws.map((raw) => submit(gate, raw)));
    await new Promise((r) => setTimeout(r, 700)); // a late write would show up in the stub
    const sent = new Set(stubs[0]!.sends().map((c) => txHash(String(c.params[0]))));
    const by = (status: number) => rs.map((r, i) => ({ r, hash: txHash(raws[i]!) })).filter((x) => x.r.status === status);
    assert.deepEqual(
      rs.filter((r) => r.status !== 200 && r.status !== 503).map((r) => r.status),
      [],
      'no 502: nothing was left uncertain',
    );
    for (const { r, hash } of by(200)) {
      assert.equal(r.json.result, hash);
      assert.ok(sent.has(hash), 'every 200 matches a forward the sequencer saw');
    }
    for (const { r, hash } of by(503)) {
      assert.equal(r.json.error.data.reason, 'overloaded');
      assert.ok(!sent.has(hash), 'a 503 was never written to the sequencer');
    }
    assert.equal(by(200).length, sent.size, 'everything the sequencer saw was answered 200');
    assert.ok(by(200).length >= 4 && by(503).length >= 4, `both outcomes occur (${by(200).length} × 200, ${by(503).length} × 503)`);
    const unsent = audit(gate).filter((l) => l.outcome === 'not_sent');
    assert.ok(unsent.length > 0 && unsent.every((l) => l.sent === false), 'the audit lines say the shed ones were not sent');
  });
  it('closing the client ends a call still waiting for a connection as never sent (no forward left hanging)', async () => {
    const stub = await new StubSequencer().start();
    setup.open.stubs.push(stub);
    stub.behaviour = () => ({ kind: 'hang' });
    const seq = new HttpUpstream(stub.url, 1);
    const times = { timeoutMs: 5_000, queueMs: 5_000 };
    const first = seq.call('eth_sendRawTransaction', '["0x01"]', times);
    const second = seq.call('eth_sendRawTransaction', '["0x02"]', times); // waits: one connection
    await eventually(() => stub.sends().length === 1);
    void seq.close();
    assert.deepEqual(await second, { kind: 'fault', why: 'the sequencer client is closing', sent: false });
    await stub.stop(); // ends the hanging first call
    assert.equal((await first).kind, 'fault');
  });
  it('a sequencer that refuses the connection between probes → 503 upstream_unavailable (never sent), not 502', async () => {
    const stub = await new StubSequencer().start();
    const gate = await startGate({
      accounts,
      config: { chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [stub.url], probe: { intervalMs: 60_000 } }] },
    });
    setup.open.gates.push(gate);
    await submit(gate, await next()); // a pooled connection exists
    await stub.stop();
    await new Promise((r) => setTimeout(r, 50)); // the pool sees its connection closed
    const r = await submit(gate, await next());
    assert.equal(r.status, 503);
    assert.equal(r.json.error.data.reason, 'upstream_unavailable');
    const ready = await send({ port: gate.port, method: 'GET', path: '/ready' });
    assert.equal(ready.status, 503, 'the refused connection took the sequencer out until a probe sees it back');
  });
  it('a wrong chain id from the sequencer makes it unhealthy', async () => {
    const { gate, stubs } = await setup(1);
    stubs[0]!.chainIdHex = '0x1';
    await eventually(async () => (await send({ port: gate.port, method: 'GET', path: '/ready' })).status === 503, 2000);
    const ready = await send({ port: gate.port, method: 'GET', path: '/ready' });
    assert.match(ready.text, /expected 0x1237/);
  });
});

describe('a client that leaves', () => {
  it('does not cancel a forward already sent; its outcome is still logged', async () => {
    const { gate, stubs } = await setup(1, { timeoutMs: 2000 });
    stubs[0]!.delayMs = 300;
    const raw = await next();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] });
    await new Promise<void>((resolve) => {
      const s = connect(gate.port, '127.0.0.1', () => {
        s.write(
          `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-Api-Key: ${key}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 100);
      });
    });
    const line = await eventually(() => audit(gate).find((l) => l.tx === txHash(raw)), 3000);
    assert.equal(line.outcome, 'accepted', 'the sequencer got it and answered; the outcome is in the audit log');
    assert.equal(stubs[0]!.sends().length, 1);
    // The request line says what the client would have got, and that nobody received it.
    const req = await eventually(() => gate.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'accepted' && l.tx === txHash(raw)), 3000);
    assert.equal(req.status, 200);
    assert.equal(req.clientGone, true);
    const ok = await submit(gate, await next());
    assert.equal(ok.status, 200);
    const delivered = await eventually(() => gate.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'accepted' && l.tx === ok.json.result), 3000);
    assert.equal(delivered.clientGone, undefined);
  });
});

describe('exactly one answer per request', () => {
  it('under concurrency, every request gets one response with its own id', async () => {
    const { gate, stubs } = await setup(2, { strategy: 'fanout' });
    stubs[0]!.behaviour = (c) => (String(c.params[0]).endsWith('0') ? { kind: 'hang' } : { kind: 'accept' });
    stubs[1]!.delayMs = 5;
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const raws = await Promise.all(Array.from({ length: 120 }, () => next()));
    const replies = await Promise.all(
      raws.map((raw, i) =>
        send({
          port: gate.port,
          agent,
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ jsonrpc: '2.0', id: i, method: i % 3 === 0 ? 'eth_chainId' : 'eth_sendRawTransaction', params: i % 3 === 0 ? [] : [raw] }),
        }),
      ),
    );
    agent.destroy();
    assert.equal(replies.length, 120);
    replies.forEach((r, i) => {
      assert.equal(r.json.id, i);
      assert.equal(r.status, 200);
      assert.equal(r.json.result, i % 3 === 0 ? '0x1237' : txHash(raws[i]!));
    });
    const lines = gate.logs.map((l) => JSON.parse(l)).filter((l) => l.reqId !== undefined && l.status !== undefined && l.audit === undefined);
    const perReq = new Map<string, number>();
    for (const l of lines) perReq.set(l.reqId, (perReq.get(l.reqId) ?? 0) + 1);
    assert.ok(
      [...perReq.values()].every((n) => n === 1),
      'each request logged (answered) once',
    );
  });
});

describe("the chain's maxInFlight, every send alike (direct)", () => {
  // docs/design.md §5.1: `maxInFlight` bounds the chain's forwards on a thread, a conditional
  // send's among them (one set of sequencer connections; one txgate_forwards_in_flight gauge).
  it('a conditional send beyond it is 503 overloaded at once, as a plain one beyond it is; counted in the gauge', async () => {
    await initCrypto();
    const stub = await new StubSequencer().start();
    setup.open.stubs.push(stub);
    stub.delayMs = 300;
    const cfg = parseConfig(
      {
        chains: [
          { chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [stub.url], forward: { maxInFlight: 1, timeoutMs: 1000 }, conditional: { enabled: true } },
        ],
      },
      '/',
      {},
    );
    const gauge: number[] = [];
    const observer = { inFlight: (_: number, n: number) => gauge.push(n) };
    const link = new ChainLink({ chain: cfg.chains[0]!, board: HealthBoard.allocate(1), slots: [0], log: pino({ level: 'silent' }) });
    const f = new ChainForwarder(link, new ChainDuplicates({ acceptedTtlMs: 0, maxEntries: 10 }), observer);
    const c = new ConditionalSend(link, f);
    const conditions = { json: '{}', blockNumberMin: null, blockNumberMax: null, timestampMin: null, timestampMax: null, cost: 0 };
    const request = (raw: string) => ({ hash: txHash(raw), rawHex: raw, account: 'mm', reqId: 't-1', sender: null, t0: performance.now() });
    const [a, b] = await Promise.all([next(), next()]);
    const plain = f.forward(request(a));
    const conditional = await c.send(request(b), conditions);
    assert.equal(conditional.reason, 'overloaded');
    assert.equal((await plain).reason, 'ok');
    const held = c.send(request(b), conditions);
    assert.equal((await f.forward(request(await next()))).reason, 'overloaded');
    await held;
    assert.deepEqual(gauge, [1, 0, 1, 0]);
    await f.close();
  });
});
