/**
 * The rehearsal (src/rehearsal/): a gate with `rehearsal.everyMs` runs its own submissions through
 * its whole path while idle, on an http:// chain and a ws:// chain in turn. Every rehearsal is
 * answered with its hash; none reaches a sequencer (the real one receives only the clients'
 * submissions and the prober's eth_chainId), none is counted in the request metrics, none writes a
 * log line; a client's submission is answered and sent exactly once whatever the rehearsals do; the
 * rehearsal stops and closes with the gate. And its sink answers as a sequencer does.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { keccak256Hex } from '../../src/base/native.js';
import { sinkAnswer } from '../../src/rehearsal/sink.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { type Gate, newKey, startGate } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

keysNeverLogged();
const stubs: StubSequencer[] = [];
const gates: Gate[] = [];
after(async () => {
  for (const g of gates) await g.stop();
  for (const s of stubs) await s.stop();
});

/** The sum of a metric's samples in a Prometheus text page. */
function total(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

describe('the rehearsal', () => {
  it('runs idle, every one answered with its hash, on both transports; nothing reaches a sequencer, the metrics or the log', async () => {
    const stub = await new StubSequencer().start();
    stubs.push(stub);
    const key = newKey();
    const gate = await startGate({
      internal: true,
      accounts: [{ id: 'desk', keys: [key], grants: [{ chainId: 4663 }, { chainId: 10 }] }],
      config: {
        rehearsal: { everyMs: 10 },
        log: { level: 'info' },
        chains: [
          { chainId: 4663, hosts: ['localhost'], sequencers: [stub.url], probe: { intervalMs: 600_000, timeoutMs: 1000 } },
          // Its one sequencer never answers: the rehearsal's forward on it goes to its own sink, over WebSocket.
          { chainId: 10, hosts: ['fast.chain-b.example'], sequencers: ['ws://127.0.0.1:9'], probe: { intervalMs: 600_000, timeoutMs: 1000 } },
        ],
      },
    });
    gates.push(gate);
    const rehearsal = gate.app.rehearsal;
    assert.ok(rehearsal !== null, 'a rehearsal on the thread');
    for (let k = 0; k < 200 && rehearsal.counts.answered < 10; k++) await sleep(20);
    assert.ok(
      rehearsal.counts.answered >= 10,
      `answered ${rehearsal.counts.answered}, failed ${rehearsal.counts.failed}: ${gate.logs.filter((l) => l.includes('rehearsal')).join(' | ')}`,
    );
    assert.equal(rehearsal.counts.failed, 0, 'every rehearsal answered with its hash (the chains in turn: both transports)');

    assert.equal(stub.sends().length, 0, 'no rehearsal reached the sequencer');
    const metrics = await send({ port: gate.internalPort!, method: 'GET', path: '/metrics', host: '127.0.0.1' });
    assert.equal(total(metrics.text, 'txgate_requests_total'), 0, 'no rehearsal counted as a request');
    assert.ok(/txgate_rehearsals_total\{result="answered"\} [1-9]/.test(metrics.text), 'the rehearsals are counted on their own');
    assert.match(metrics.text, /txgate_rehearsals_total\{result="failed"\} 0/);
    assert.equal(
      gate.logs.filter((l) => l.includes('eth_sendRawTransaction')).length,
      0,
      `no rehearsal logged: ${gate.logs.filter((l) => l.includes('eth_sendRawTransaction'))[0]}`,
    );

    // A client's submissions between rehearsals: each answered with its hash and sent once.
    const sent: string[] = [];
    for (let n = 0; n < 5; n++) {
      const raw = await sign1559({ nonce: n });
      const r = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.result, txHash(raw));
      sent.push(txHash(raw));
      await sleep(15);
    }
    const received = stub.sends().map((c) => txHash(c.params[0] as string));
    assert.deepEqual(received, sent, 'the sequencer received the clients’ submissions, each once, and nothing else');
    assert.equal(gate.logs.filter((l) => l.includes('eth_sendRawTransaction')).length >= 5, true, 'the clients’ submissions are logged');
    const after = await send({ port: gate.internalPort!, method: 'GET', path: '/metrics', host: '127.0.0.1' });
    assert.equal(total(after.text, 'txgate_requests_total'), 5, 'the clients’ five, not the rehearsals');
    assert.equal(rehearsal.counts.failed, 0);

    await gate.stop();
    gates.length = 0;
    const stopped = rehearsal.counts.answered;
    await sleep(100);
    assert.equal(rehearsal.counts.answered, stopped, 'no rehearsal after the gate stopped');
  });
});

describe("the rehearsal's sink", () => {
  it('answers eth_sendRawTransaction with the keccak-256 of the bytes, by id', () => {
    const raw = '0x02c0ffee';
    const a = JSON.parse(sinkAnswer(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_sendRawTransaction', params: [raw] })));
    assert.deepEqual(a, { jsonrpc: '2.0', id: 7, result: keccak256Hex(Buffer.from('02c0ffee', 'hex')) });
    assert.equal(a.result, txHash(raw));
  });
  it('answers anything else with an error, never a result', () => {
    for (const text of [
      '',
      'null',
      '[]',
      '{"id":"x","method":"eth_chainId"}',
      '{"id":1,"method":"eth_sendRawTransaction","params":["0x0"]}',
      '{"id":1,"method":"eth_sendRawTransaction","params":[1]}',
    ])
      assert.equal(JSON.parse(sinkAnswer(text)).result, undefined, text);
    assert.equal(JSON.parse(sinkAnswer('{"id":"x","method":"eth_chainId"}')).id, 'x');
  });
});
