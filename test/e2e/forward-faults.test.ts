/**
 * Forwarding faults against stub sequencers (the only place stubs are used: to inject faults):
 * timeout, 500, HTML, wrong hash, already-known and nonce-too-low handling, failover and fanout
 * ordering. Duplicate suppression, load shedding, health and exactly one answer per request:
 * forward-shedding.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventually, newKey, startGate, type Gate } from '../support/harness.js';
import { rpc } from '../support/http.js';
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
    setup.open.stubs.push(stub);
    const url = `http://us%40er:p%3Ass@127.0.0.1:${stub.port}`;
    const gate = await startGate({
      accounts,
      config: { chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [url], forward: { timeoutMs: 300 } }] },
    });
    setup.open.gates.push(gate);
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
