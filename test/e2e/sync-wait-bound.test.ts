/**
 * The sync send is answered by its wait at the latest, in every format (docs/design.md §6.2):
 * a sequencer that holds eth_sendRawTransactionSync past the wait, and whose lookup does not know
 * the hash, has the call cut at its part of the wait (sync/budget.ts); the same bytes resent
 * are taken (the hash), so the answer is 202 sync_timeout, written within the wait, not a
 * forward timeout after it. The stub sequencer stands in: no chain holds a call on demand.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { newKey, startGate, stubChain, type Gate } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';

keysNeverLogged();

const key = newKey();
const accounts = [{ id: 'mm', keys: [key], grants: [{ rateLimit: { perSecond: 1e6, burst: 1e6 }, sync: true }] }];
const MAX_WAIT_MS = 1000;
const FORWARD_TIMEOUT_MS = 1000;
/** The sequencer's part of a 1,000-ms wait: three quarters, settling gets the rest (src/sync/budget.ts; test/unit/sync-budget.test.ts). */
const SEQUENCER_PART_MS = 750;
let nonce = 0;
const open: { gates: Gate[]; stubs: StubSequencer[] } = { gates: [], stubs: [] };
after(async () => {
  for (const g of open.gates) await g.stop();
  for (const s of open.stubs) await s.stop();
});

for (const format of ['omit', 'number'] as const) {
  describe(`eth_sendRawTransactionSync, syncTimeoutFormat ${format}: held past the wait, the hash unknown`, () => {
    it('202 sync_timeout with the hash, within the wait (the forward timeout inside it, not after)', async () => {
      const stub = await new StubSequencer().start();
      open.stubs.push(stub);
      // The sync call is held (as a sequencer waiting for a block that does not come); the plain resend is taken.
      stub.behaviour = (c) => (c.method === 'eth_sendRawTransactionSync' ? { kind: 'hang' } : { kind: 'accept' });
      const gate = await startGate({
        accounts,
        config: {
          chains: [
            stubChain(
              [stub.url],
              { timeoutMs: FORWARD_TIMEOUT_MS },
              { sync: { enabled: true, mode: 'forward', maxWaitMs: MAX_WAIT_MS, syncTimeoutFormat: format } },
            ),
          ],
        },
      });
      open.gates.push(gate);
      const raw = await sign1559({ nonce: nonce++ });
      const t = performance.now();
      const r = await rpc(gate.port, 'eth_sendRawTransactionSync', [raw], { key });
      const ms = performance.now() - t;
      assert.equal(r.status, 202, JSON.stringify(r.json));
      assert.deepEqual([r.json.error.code, r.json.error.data.reason, r.json.error.data.txHash], [4, 'sync_timeout', txHash(raw)]);
      const sync = stub.calls.filter((c) => c.method === 'eth_sendRawTransactionSync');
      assert.equal(sync.length, 1, 'the sync call written once');
      if (format === 'number') {
        // The wait told to the sequencer is its part of the wait, not the whole: settling comes out of the rest.
        const told = sync[0]!.params[1] as number;
        assert.ok(told > 0 && told <= SEQUENCER_PART_MS, `told ${told} ms, its part is ${SEQUENCER_PART_MS} ms`);
      } else assert.equal(sync[0]!.params.length, 1, 'omit: the wait is not written');
      // A logic check, not a speed figure: the old bound (the wait plus a forward timeout, then settling) is twice the wait.
      assert.ok(ms < MAX_WAIT_MS * 1.5, `answered after ${Math.round(ms)} ms; the wait is ${MAX_WAIT_MS} ms`);
    });
  });
}
