/**
 * Busy polling (config `busyPoll`): the spinner runs at nice 19 (never competing with the server
 * thread), parks when no request came for its idle time, is woken by the next request, and
 * stops with the service. A service with it on answers as usual.
 */
import assert from 'node:assert/strict';
import { getPriority } from 'node:os';
import { after, describe, it } from 'node:test';
import { BusyPoll } from '../src/busy-poll.js';
import { eventually, keysInLogs, newKey, startGate } from './support/harness.js';
import { rpc } from './support/http.js';
import { StubSequencer } from './support/stub-sequencer.js';
import { sign1559 } from './support/txs.js';

after(() => assert.deepEqual(keysInLogs(), []));

describe('busy polling', () => {
  it('spins at the lowest priority, parks when idle, wakes on a request, stops', async () => {
    const b = new BusyPoll({ idleMs: 50 });
    await b.started;
    assert.equal(b.status().spinning, true);
    assert.ok(b.tid > 0 && b.tid !== process.pid);
    assert.equal(getPriority(b.tid), 19, 'the spinner thread runs at nice 19');
    assert.equal(getPriority(process.pid), 0, 'the server thread keeps its priority');
    await eventually(() => b.status().parked, 5000);
    b.touch();
    await eventually(() => !b.status().parked, 5000);
    await b.stop();
  });

  it('a service with busyPoll on answers as usual', async () => {
    const stub = await new StubSequencer().start();
    const key = newKey();
    const gate = await startGate({ accounts: [{ id: 'bp', keys: [key] }], config: { busyPoll: true, chains: [{ chainId: 4663, hosts: ['localhost'], sequencers: [stub.url] }] } });
    try {
      assert.equal((await rpc(gate.port, 'eth_chainId', [])).json.result, '0x1237');
      const raw = await sign1559({ nonce: 0 });
      const r = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
      assert.equal(r.status, 200);
      assert.match(r.json.result, /^0x[0-9a-f]{64}$/);
    } finally {
      await gate.stop();
      await stub.stop();
    }
  });
});
