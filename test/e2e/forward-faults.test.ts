/**
 * Forwarding faults against stub sequencers (the only place stubs are used: to inject faults):
 * timeout, 500, HTML, wrong hash, failover, fanout ordering, already-known and nonce-too-low
 * handling, duplicate suppression, load shedding, and exactly one answer per request.
 */
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { parseConfig } from '../../src/config.js';
import { ChainDuplicates } from '../../src/forward/dedup.js';
import { ChainLink } from '../../src/forward/chain-link.js';
import { ChainForwarder } from '../../src/forward/forwarder.js';
import { HealthBoard } from '../../src/forward/health-board.js';
import { HttpUpstream } from '../../src/upstreams/http/http-upstream.js';
import { initCrypto } from '../../src/native.js';
import { eventually, newKey, startGate, stubChain, type Gate } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';

keysNeverLogged();

const key = newKey();
const accounts = [{ id: 'mm', keys: [key], grants: [{ rateLimit: { perSecond: 1e6, burst: 1e6 } }] }];
let nonce = 0;
const next = () => sign1559({ nonce: nonce++ });

const open: { gates: Gate[]; stubs: StubSequencer[] } = { gates: [], stubs: [] };
async function setup(n: number, forward: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const stubs = await Promise.all(Array.from({ length: n }, () => new StubSequencer().start()));
  const gate = await startGate({
    accounts,
    config: {
      chains: [
        stubChain(
          stubs.map((s) => s.url),
          forward,
        ),
      ],
      ...extra,
    },
  });
  open.gates.push(gate);
  open.stubs.push(...stubs);
  return { gate, stubs };
}
afterEach(async () => {
  for (const g of open.gates.splice(0)) await g.stop();
  for (const s of open.stubs.splice(0)) await s.stop();
});
const submit = (gate: Gate, raw: string, id: unknown = 1) => rpc(gate.port, 'eth_sendRawTransaction', [raw], { key, id });
const audit = (gate: Gate) => gate.logs.map((l) => JSON.parse(l)).filter((l) => l.audit === 'forward');

describe('outcomes with one sequencer', () => {
  it('success: 200 with the locally computed hash, and one audit line', async () => {
    const { gate } = await setup(1);
    const raw = await next();
    const r = await submit(gate, raw, 'abc');
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 'abc', result: txHash(raw) });
    const lines = audit(gate);
    assert.equal(lines.length, 1);
    assert.equal(lines[0].tx, txHash(raw));
    assert.equal(lines[0].account, 'mm');
    assert.equal(lines[0].outcome, 'accepted');
    assert.equal(typeof lines[0].ms, 'number');
    assert.match(lines[0].sequencer, /^http:\/\/127\.0\.0\.1:\d+$/);
  });
  it('credentials in a sequencer URL go as Basic auth, and never into logs', async () => {
    const stub = await new StubSequencer().start();
    open.stubs.push(stub);
    const url = `http://us%40er:p%3Ass@127.0.0.1:${stub.port}`;
    const gate = await startGate({ accounts, config: { chains: [{ chainId: 4663, hosts: ['localhost'], sequencers: [url], forward: { timeoutMs: 300 } }] } });
    open.gates.push(gate);
    const raw = await next();
    const r = await submit(gate, raw);
    assert.equal(r.json.result, txHash(raw));
    const send = stub.sends()[0]!;
    assert.equal(send.authorization, 'Basic ' + Buffer.from('us@er:p:ss').toString('base64'));
    assert.equal(send.contentType, 'application/json');
    const probes = stub.calls.filter((c) => c.method === 'eth_chainId');
    assert.ok(probes.length > 0 && probes.every((c) => c.authorization === send.authorization), 'probes too');
    assert.ok(!gate.logs.some((l) => l.includes('p%3Ass') || l.includes('p:ss')), 'the password is not logged');
  });

  it('timeout → 502 upstream_error carrying the hash; the log line has it for reconciliation', async () => {
    const { gate, stubs } = await setup(1);
    stubs[0]!.behaviour = () => ({ kind: 'hang' });
    const raw = await next();
    const r = await submit(gate, raw);
    assert.equal(r.status, 502);
    assert.equal(r.json.error.data.reason, 'upstream_error');
    assert.equal(r.json.error.data.txHash, txHash(raw));
    assert.ok(gate.logs.some((l) => l.includes('outcome uncertain') && l.includes(txHash(raw))));
  });
  for (const [what, b] of [
    ['HTTP 500', { kind: 'http', status: 500, body: '{"jsonrpc":"2.0","id":1,"result":"0x00"}' }],
    ['an HTML body', { kind: 'http', status: 200, body: '<html>bad gateway</html>', contentType: 'text/html' }],
    ['a JSON body that is not JSON-RPC', { kind: 'http', status: 200, body: '{"ok":true}' }],
    ['a dropped connection', { kind: 'destroy' }],
  ] as const) {
    it(`${what} → 502 upstream_error, never a 200`, async () => {
      const { gate, stubs } = await setup(1);
      stubs[0]!.behaviour = () => b as never;
      const r = await submit(gate, await next());
      assert.equal(r.status, 502);
      assert.equal(r.json.error.data.reason, 'upstream_error');
    });
  }
  it('a different hash → 502, logged loudly', async () => {
    const { gate, stubs } = await setup(1);
    stubs[0]!.behaviour = () => ({ kind: 'result', result: '0x' + '11'.repeat(32) });
    const r = await submit(gate, await next());
    assert.equal(r.status, 502);
    assert.equal(r.json.error.data.reason, 'upstream_error');
    assert.ok(gate.logs.some((l) => l.includes('"level":"error"') && l.includes('DIFFERENT HASH')));
  });
  it('"already known" wordings → 200 with the local hash only where the sequencer\'s lookup returns this transaction', async () => {
    const { gate, stubs } = await setup(1);
    for (const message of ['already known', 'known transaction: 0xabc', 'transaction already imported', 'AlreadyKnown', 'Transaction is already in the pool']) {
      stubs[0]!.behaviour = () => ({ kind: 'error', code: -32000, message });
      const raw = await next();
      stubs[0]!.knownTx = (h) => (h === txHash(raw) ? { hash: h } : null);
      const r = await submit(gate, raw);
      assert.deepEqual(r.json.result, txHash(raw), message);
      const line = audit(gate).find((l) => l.tx === txHash(raw));
      assert.equal(line?.rule, 'lookup');
      assert.equal(line?.outcome, 'accepted');
      assert.equal(line?.answer, 'already_known');
      // The same wording for a hash the sequencer does not know: the refusal it says it is.
      const other = await next();
      const refused = await submit(gate, other);
      assert.equal(refused.status, 200);
      assert.equal(refused.json.result, undefined, message);
      assert.deepEqual(refused.json.error, { code: -32000, message, data: { reason: 'upstream_rejected' } });
    }
  });
  it('"nonce too low" → 200 only if the sequencer knows that hash', async () => {
    const { gate, stubs } = await setup(1);
    stubs[0]!.behaviour = () => ({ kind: 'error', code: -32000, message: 'nonce too low' });
    const known = await next();
    stubs[0]!.knownTx = (h) => (h === txHash(known) ? { hash: h } : null);
    let r = await submit(gate, known);
    assert.equal(r.status, 200);
    assert.equal(r.json.result, txHash(known));
    r = await submit(gate, await next());
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.error, { code: -32000, message: 'nonce too low', data: { reason: 'upstream_rejected' } });
  });
  it('"nonce too low", and looking the hash up fails: 502 upstream_error with the hash (uncertain), never a refusal', async () => {
    const { gate, stubs } = await setup(1);
    stubs[0]!.behaviour = () => ({ kind: 'error', code: -32000, message: 'nonce too low' });
    stubs[0]!.lookupFails = true;
    const raw = await next();
    const r = await submit(gate, raw);
    assert.equal(r.status, 502);
    assert.equal(r.json.error.data.reason, 'upstream_error');
    assert.equal(r.json.error.data.txHash, txHash(raw));
    const audit = gate.logs.map((l) => JSON.parse(l)).find((l) => l.audit === 'forward' && l.tx === txHash(raw));
    assert.equal(audit?.outcome, 'uncertain');
    assert.equal(audit?.answer, 'fault');
    assert.equal(audit?.rule, undefined);
    assert.match(audit?.detail, /nonce too low; the lookup failed/);
  });
  it('any other JSON-RPC error passes through with HTTP 200 and its code and message', async () => {
    const { gate, stubs } = await setup(1);
    stubs[0]!.behaviour = () => ({ kind: 'error', code: -32003, message: 'insufficient funds for gas * price + value' });
    const r = await submit(gate, await next(), 5);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, {
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32003, message: 'insufficient funds for gas * price + value', data: { reason: 'upstream_rejected' } },
    });
  });
});

describe('failover', () => {
  it('moves to the second sequencer on a fault', async () => {
    const { gate, stubs } = await setup(2);
    stubs[0]!.behaviour = () => ({ kind: 'http', status: 503, body: 'busy' });
    const raw = await next();
    const r = await submit(gate, raw);
    assert.equal(r.json.result, txHash(raw));
    assert.ok(stubs[0]!.sends().length >= 1);
    assert.equal(stubs[1]!.sends().length, 1);
  });
  it('never moves on after a JSON-RPC answer (it is deterministic)', async () => {
    const { gate, stubs } = await setup(2);
    stubs[0]!.behaviour = () => ({ kind: 'error', code: -32000, message: 'max fee per gas less than block base fee' });
    const r = await submit(gate, await next());
    assert.equal(r.json.error.data.reason, 'upstream_rejected');
    assert.equal(stubs[1]!.sends().length, 0);
  });
  it('502 when every sequencer faulted', async () => {
    const { gate, stubs } = await setup(2);
    for (const s of stubs) s.behaviour = () => ({ kind: 'http', status: 500, body: '' });
    const r = await submit(gate, await next());
    assert.equal(r.status, 502);
  });
});

describe('fanout', () => {
  it('slow then fast: the first success wins; the loser is not cancelled and is logged', async () => {
    const { gate, stubs } = await setup(2, { strategy: 'fanout', timeoutMs: 2000 });
    stubs[0]!.delayMs = 400;
    const raw = await next();
    const t = Date.now();
    const r = await submit(gate, raw);
    assert.equal(r.json.result, txHash(raw));
    assert.ok(Date.now() - t < 400, 'answered by the fast one');
    await eventually(() => audit(gate).some((l) => l.role === 'loser'), 2000);
    assert.equal(stubs[0]!.sends().length, 1);
  });
  it('error then success: the success wins', async () => {
    const { gate, stubs } = await setup(2, { strategy: 'fanout', timeoutMs: 2000 });
    stubs[0]!.behaviour = () => ({ kind: 'error', code: -32000, message: 'txpool is full' });
    stubs[1]!.delayMs = 150;
    const raw = await next();
    const r = await submit(gate, raw);
    assert.equal(r.status, 200);
    assert.equal(r.json.result, txHash(raw));
  });
  it('all refuse: the JSON-RPC error passes through', async () => {
    const { gate, stubs } = await setup(2, { strategy: 'fanout' });
    for (const s of stubs) s.behaviour = () => ({ kind: 'error', code: -32000, message: 'underpriced' });
    const r = await submit(gate, await next());
    assert.equal(r.json.error.data.reason, 'upstream_rejected');
  });
});

describe('fanout with a failing observer (direct)', () => {
  // A throwing metrics observer must neither leave a request unanswered nor end the process
  // with an unhandled rejection (fanout's attempts run detached from the request's promise).
  const forwarderOver = (stubs: StubSequencer[]) => {
    const cfg = parseConfig(
      { chains: [{ chainId: 4663, hosts: ['localhost'], sequencers: stubs.map((s) => s.url), forward: { strategy: 'fanout', timeoutMs: 1000 } }] },
      '/',
      {},
    );
    const observer = {
      forward() {
        throw new Error('observer failed');
      },
    };
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

  it('an acceptance still answers 200, and every attempt is settled', async () => {
    const stubs = await Promise.all([new StubSequencer().start(), new StubSequencer().start()]);
    open.stubs.push(...stubs);
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
    open.stubs.push(...stubs);
    for (const s of stubs) s.behaviour = () => ({ kind: 'http', status: 500, body: '' });
    const f = forwarderOver(stubs);
    const exit = await f.forward(request(await next()));
    assert.equal(exit.reason, 'upstream_error');
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
    const { gate, stubs } = await setup(1, {}, { dedup: { acceptedTtlMs: 0 } });
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
    open.stubs.splice(open.stubs.indexOf(stubs[0]!), 1);
    await eventually(async () => (await send({ port: gate.port, method: 'GET', path: '/ready' })).status === 503, 2000);
    const ready = await send({ port: gate.port, method: 'GET', path: '/ready' });
    assert.equal(ready.json.status, 'not_ready');
    assert.match(ready.json.notReady.join(' '), /chain 4663: no healthy sequencer/);
    const r = await submit(gate, await next());
    assert.equal(r.status, 503);
    assert.equal(r.json.error.data.reason, 'upstream_unavailable');
    const back = await new StubSequencer().start(port);
    open.stubs.push(back);
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
    open.stubs.push(stub);
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
      config: { chains: [{ chainId: 4663, hosts: ['localhost'], sequencers: [stub.url], probe: { intervalMs: 60_000 } }] },
    });
    open.gates.push(gate);
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
