/**
 * Every answer true (forward/attempts.ts), against fault-injecting sequencers, on every path
 * (HTTP, the WebSocket transport, the sync send): no acceptance without the hash or a lookup that
 * returns this very transaction; no definite refusal while a written sequencer is unresolved;
 * a written sequencer that faults is asked again (the hash, the same bytes) before any 502.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import WebSocket from 'ws';
import { eventually, newKey, type Gate } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { type Behaviour, type Call, type StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { useStubGates } from '../support/gate-fixture.js';

const key = newKey();
const accounts = [{ id: 'mm', keys: [key], grants: [{ rateLimit: { perSecond: 1e6, burst: 1e6 }, sync: true }] }];
let nonce = 90_000;
const next = () => sign1559({ nonce: nonce++ });

const setup = useStubGates({ accounts, internal: true });
const submit = (gate: Gate, raw: string, method = 'eth_sendRawTransaction') => rpc(gate.port, method, [raw], { key });
const audits = (gate: Gate, raw: string) => gate.logs.map((l) => JSON.parse(l)).filter((l) => l.audit === 'forward' && l.tx === txHash(raw));
/** Never an acceptance: no result, no 202. */
function notAccepted(r: { status: number; json: { result?: unknown; error?: { data?: { reason?: string } } } }, what: string): void {
  assert.equal(r.json.result, undefined, what);
  assert.notEqual(r.status, 202, what);
  assert.notEqual(r.json.error?.data?.reason, 'sync_timeout', what);
}
const refusalOf = (message: string): Behaviour => ({ kind: 'error', code: -32000, message });
/** Answers `first` to the first eth_sendRawTransaction of each transaction, `then` to the rest. */
function firstThen(first: Behaviour, then: Behaviour): (c: Call) => Behaviour {
  const seen = new Set<string>();
  return (c) => {
    const raw = String(c.params[0]);
    if (seen.has(raw)) return then;
    seen.add(raw);
    return first;
  };
}

/** Refusals whose words contain what the "already known" match used to take for an acceptance. */
const MISLEADING = [
  'unknown transaction type',
  'rlp: unknown transaction type 0x05',
  'known transaction: rejected by policy',
  'sender already in the pool with a higher fee',
  'transaction already exists in a banned list',
  'already known',
  'nonce too low',
];

describe('an acceptance is a hash, never a wording', () => {
  it('HTTP: a refusal in misleading words, the hash unknown to the lookup, is the refusal it says it is', async () => {
    const { gate, stubs } = await setup(1);
    for (const message of MISLEADING) {
      stubs[0]!.behaviour = () => refusalOf(message);
      const raw = await next();
      const r = await submit(gate, raw);
      notAccepted(r, message);
      assert.equal(r.status, 200, message);
      assert.deepEqual(r.json.error, { code: -32000, message, data: { reason: 'upstream_rejected' } }, message);
      assert.ok(
        stubs[0]!.calls.some((c) => c.method === 'eth_getTransactionByHash' && c.params[0] === txHash(raw)),
        `${message}: looked up`,
      );
    }
  });

  it('HTTP: an endpoint that serves no lookup leaves "already known" uncertain (502 with the hash), never accepted', async () => {
    const { gate, stubs } = await setup(1);
    stubs[0]!.behaviour = () => refusalOf('already known');
    stubs[0]!.lookupBehaviour = () => ({ kind: 'error', code: -32601, message: 'the method eth_getTransactionByHash does not exist' });
    const raw = await next();
    const r = await submit(gate, raw);
    assert.equal(r.status, 502, JSON.stringify(r.json));
    assert.deepEqual([r.json.error.data.reason, r.json.error.data.txHash], ['upstream_error', txHash(raw)]);
    assert.equal(audits(gate, raw)[0]?.outcome, 'uncertain');
  });

  it('HTTP: a lookup answering another transaction, or garbage, confirms nothing', async () => {
    const { gate, stubs } = await setup(1);
    stubs[0]!.behaviour = () => refusalOf('already known');
    for (const result of [{ hash: '0x' + '22'.repeat(32) }, { hash: 42 }, 'yes', true, [], { blockHash: '0x01' }]) {
      stubs[0]!.lookupBehaviour = () => ({ kind: 'result', result });
      const r = await submit(gate, await next());
      notAccepted(r, JSON.stringify(result));
    }
  });

  it('the WebSocket transport: a misleading refusal is answered as a refusal, a confirmed one with the hash', async () => {
    const { gate, stubs } = await setup(1, {}, {}, { websocket: { enabled: true } });
    const ws = new WebSocket(`ws://127.0.0.1:${gate.port}/`, { headers: { host: 'localhost', 'x-api-key': key }, perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const answers = new Map<number, { result?: unknown; error?: { message: string; data: { reason: string } } }>();
    ws.on('message', (d) => {
      const m = JSON.parse(String(d)) as { id: number; result?: unknown; error?: { message: string; data: { reason: string } } };
      answers.set(m.id, m);
    });
    try {
      stubs[0]!.behaviour = () => refusalOf('rlp: unknown transaction type 0x05');
      const refused = await next();
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [refused] }));
      const a1 = await waitFor(() => answers.get(1));
      assert.equal(a1.result, undefined);
      assert.equal(a1.error?.data.reason, 'upstream_rejected');
      const known = await next();
      stubs[0]!.behaviour = () => refusalOf('already known');
      stubs[0]!.knownTx = (h) => (h === txHash(known) ? { hash: h } : null);
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_sendRawTransaction', params: [known] }));
      const a2 = await waitFor(() => answers.get(2));
      assert.equal(a2.result, txHash(known));
    } finally {
      ws.terminate();
    }
  });

  it('the sync send: code 4 is an acceptance only where the lookup returns the transaction, whatever its message', async () => {
    const { gate, stubs } = await setup(1, {}, { sync: { enabled: true, mode: 'forward', maxWaitMs: 300 } });
    stubs[0]!.behaviour = () => ({ kind: 'error', code: 4, message: 'insufficient funds for gas * price + value' });
    const raw = await next();
    const r = await submit(gate, raw, 'eth_sendRawTransactionSync');
    notAccepted(r, 'code 4 unconfirmed');
    assert.equal(r.status, 502, JSON.stringify(r.json));
    assert.equal(r.json.error.data.txHash, txHash(raw));
    // Misleading refusal words: the refusal, as for the plain send.
    stubs[0]!.behaviour = () => refusalOf('unknown transaction type');
    const r2 = await submit(gate, await next(), 'eth_sendRawTransactionSync');
    notAccepted(r2, 'sync, misleading words');
    assert.equal(r2.json.error.data.reason, 'upstream_rejected');
    // Confirmed: 202 code 4 with the hash.
    const known = await next();
    stubs[0]!.behaviour = () => ({ kind: 'error', code: 4, message: 'the transaction was added to the pool but not yet included' });
    stubs[0]!.knownTx = (h) => (h === txHash(known) ? { hash: h } : null);
    const r3 = await submit(gate, known, 'eth_sendRawTransactionSync');
    assert.equal(r3.status, 202, JSON.stringify(r3.json));
    assert.deepEqual([r3.json.error.code, r3.json.error.data.txHash], [4, txHash(known)]);
  });
});

/** The written sequencer's faults, and what it says when asked again. */
const FAULTS: Array<[string, Behaviour]> = [
  ['times out', { kind: 'hang' }],
  ['resets', { kind: 'destroy' }],
  ['answers 500', { kind: 'http', status: 500, body: 'oops' }],
];
const REFUSALS = ['txpool is full', 'insufficient funds for gas * price + value', 'nonce too low'];

for (const strategy of ['failover', 'fanout'] as const) {
  describe(`a refusal is definite only when no written sequencer is unresolved (${strategy})`, () => {
    for (const [fault, b] of FAULTS) {
      it(`A ${fault} after being written, B refuses: A knows the hash → 200; A cannot tell → 502 with the hash; A refuses the same bytes → the refusal`, async () => {
        const { gate, stubs } = await setup(2, { strategy });
        const [a, bSeq] = stubs as [StubSequencer, StubSequencer];
        for (const refusal of REFUSALS) {
          bSeq.behaviour = () => refusalOf(refusal);
          // A knows the hash (its lookup returns the transaction): accepted.
          let raw = await next();
          a.behaviour = () => b;
          a.knownTx = (h) => (h === txHash(raw) ? { hash: h } : null);
          let r = await submit(gate, raw);
          assert.equal(r.json.result, txHash(raw), `${fault}/${refusal}: known → accepted ${JSON.stringify(r.json)}`);
          // A cannot tell within the budget: uncertain, never the refusal.
          raw = await next();
          a.knownTx = () => null;
          a.behaviour = () => b;
          r = await submit(gate, raw);
          assert.equal(r.status, 502, `${fault}/${refusal}: ${JSON.stringify(r.json)}`);
          assert.deepEqual([r.json.error.data.reason, r.json.error.data.txHash], ['upstream_error', txHash(raw)]);
          const lines = audits(gate, raw);
          assert.ok(
            lines.some((l) => l.outcome === 'uncertain'),
            JSON.stringify(lines),
          );
          // A reset left standing takes A out until the next probe (every 100 ms) sees it back.
          await eventually(() => allUp(gate));
          // A, asked again, refuses the same bytes in words of its own: the refusal is definite.
          raw = await next();
          a.behaviour = firstThen(b, refusalOf('exceeds block gas limit'));
          r = await submit(gate, raw);
          assert.equal(r.status, 200, `${fault}/${refusal}: ${JSON.stringify(r.json)}`);
          assert.equal(r.json.error?.data.reason, 'upstream_rejected');
          // A, asked again, accepts the same bytes: accepted (resend).
          raw = await next();
          a.behaviour = firstThen(b, { kind: 'accept' });
          r = await submit(gate, raw);
          assert.equal(r.json.result, txHash(raw), `${fault}/${refusal}: resend accepted ${JSON.stringify(r.json)}`);
        }
      });
    }
  });
}

describe('resolved before any 502', () => {
  it('a sequencer that resets a connection after reading nothing: the same bytes resent, 200 (rule resend or lookup), never 502 or 503', async () => {
    const { gate, stubs } = await setup(1);
    stubs[0]!.behaviour = firstThen({ kind: 'destroy' }, { kind: 'accept' });
    for (let i = 0; i < 5; i++) {
      const raw = await next();
      const r = await submit(gate, raw);
      assert.equal(r.json.result, txHash(raw), JSON.stringify(r.json));
      const line = audits(gate, raw)[0];
      assert.equal(line?.rule, 'resend');
    }
  });

  it('the sync send, written and reset, B refusing: never a definite refusal while A cannot tell', async () => {
    const { gate, stubs } = await setup(2, {}, { sync: { enabled: true, mode: 'forward', maxWaitMs: 300 } });
    stubs[0]!.behaviour = () => ({ kind: 'destroy' });
    stubs[1]!.behaviour = () => refusalOf('txpool is full');
    const raw = await next();
    const r = await submit(gate, raw, 'eth_sendRawTransactionSync');
    assert.equal(r.status, 502, JSON.stringify(r.json));
    assert.equal(r.json.error.data.txHash, txHash(raw));
  });
});

async function waitFor<T>(f: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('no answer in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Every sequencer up on the health board (txgate_sequencer_up, which reads it at each scrape). */
async function allUp(gate: Gate): Promise<boolean> {
  const text = (await send({ port: gate.internalPort!, method: 'GET', path: '/metrics', host: '127.0.0.1' })).text;
  const lines = text.split('\n').filter((l) => l.startsWith('txgate_sequencer_up{'));
  return lines.length > 0 && lines.every((l) => l.endsWith(' 1'));
}
