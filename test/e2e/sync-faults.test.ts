/**
 * eth_sendRawTransactionSync's answers to faults a real chain does not make on demand: a
 * sequencer that takes the bytes and never answers, one that refuses with EIP-7966's code 5,
 * one that is down. Both modes; the stub sequencer (test/support) stands in for the sequencer
 * and, in `receipt` mode, for the chain RPC.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { newKey, startGate, stubChain, type Gate } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { freePort } from '../../src/base/free-port.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';

keysNeverLogged();

const key = newKey();
const accounts = [{ id: 'mm', keys: [key], grants: [{ rateLimit: { perSecond: 1e6, burst: 1e6 }, sync: true }] }];
let nonce = 0;
const next = () => sign1559({ nonce: nonce++ });

const open: { gates: Gate[]; stubs: StubSequencer[] } = { gates: [], stubs: [] };
/** A txgate whose one sequencer (and chain RPC, in receipt mode) is `url`, or a new stub. */
async function setup(mode: 'forward' | 'receipt', url?: string): Promise<{ gate: Gate; stub: StubSequencer }> {
  const stub = await new StubSequencer().start();
  open.stubs.push(stub);
  const target = url ?? stub.url;
  const gate = await startGate({
    accounts,
    config: {
      chains: [stubChain([target], {}, { ...(mode === 'receipt' ? { rpc: target } : {}), sync: { enabled: true, mode, maxWaitMs: 300, pollMs: 20 } })],
    },
  });
  open.gates.push(gate);
  return { gate, stub };
}
afterEach(async () => {
  for (const g of open.gates.splice(0)) await g.stop();
  for (const s of open.stubs.splice(0)) await s.stop();
});
const syncCall = (gate: Gate, raw: string) => rpc(gate.port, 'eth_sendRawTransactionSync', [raw], { key });
const TX_OBJECT = (hash: string) => ({ hash, nonce: '0x0', blockNumber: null });

for (const mode of ['forward', 'receipt'] as const) {
  describe(`eth_sendRawTransactionSync faults, ${mode} mode`, () => {
    it('written and never answered, the hash unknown to the sequencer: 502 upstream_error with the hash (uncertain), never "not sent"', async () => {
      const { gate, stub } = await setup(mode);
      stub.behaviour = () => ({ kind: 'hang' });
      const raw = await next();
      const r = await syncCall(gate, raw);
      assert.equal(r.status, 502, JSON.stringify(r.json));
      assert.deepEqual([r.json.error.data.reason, r.json.error.data.txHash], ['upstream_error', txHash(raw)]);
      const sent = stub.calls.filter((c) => c.method === (mode === 'forward' ? 'eth_sendRawTransactionSync' : 'eth_sendRawTransaction'));
      if (mode === 'forward') assert.equal(sent.length, 1, 'the sync call was written once');
      else assert.ok(sent.length >= 1);
      // Before the 502, the same sequencer was asked again: the hash looked up, the same bytes resent.
      assert.ok(stub.calls.some((c) => c.method === 'eth_getTransactionByHash'));
      assert.ok(stub.calls.filter((c) => c.method === 'eth_sendRawTransaction' && c.params[0] === raw).length >= 1);
    });

    it('written and never answered, the hash known to the sequencer: 202, code 4, data.txHash (accepted, no receipt in the wait)', async () => {
      const { gate, stub } = await setup(mode);
      stub.behaviour = () => ({ kind: 'hang' });
      stub.knownTx = (hash) => TX_OBJECT(hash);
      const raw = await next();
      const r = await syncCall(gate, raw);
      assert.equal(r.status, 202, JSON.stringify(r.json));
      assert.deepEqual([r.json.error.code, r.json.error.data.reason, r.json.error.data.txHash], [4, 'sync_timeout', txHash(raw)]);
    });

    it("refused with EIP-7966's code 5: passed through with its code and message, as for the plain send", async () => {
      const { gate, stub } = await setup(mode);
      stub.behaviour = () => ({ kind: 'error', code: 5, message: 'transaction rejected: insufficient funds' });
      const r = await syncCall(gate, await next());
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(
        [r.json.error.code, r.json.error.message, r.json.error.data.reason],
        [5, 'transaction rejected: insufficient funds', 'upstream_rejected'],
      );
    });

    it('the sequencer down: 503 upstream_unavailable, nothing sent', async () => {
      const { gate } = await setup(mode, `http://127.0.0.1:${await freePort()}`);
      const r = await syncCall(gate, await next());
      assert.equal(r.status, 503, JSON.stringify(r.json));
      assert.equal(r.json.error.data.reason, 'upstream_unavailable');
    });
  });
}
