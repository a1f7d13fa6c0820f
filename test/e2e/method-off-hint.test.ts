/**
 * A method of an extension the chain leaves off (the sync send, the status query, the
 * conditional send) answers method_not_found naming the setting that turns it on, over HTTP and
 * on the WebSocket transport alike (one rule, the route stage's); a method txgate never serves
 * keeps the plain answer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import WebSocket from 'ws';
import { REASONS } from '../../src/base/reasons.js';
import { newKey } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { useGate } from '../support/gate-fixture.js';

const key = newKey();
const gate = useGate({ accounts: [{ id: 'desk', keys: [key] }], chainB: false, config: { websocket: { enabled: true } } });
const HASH = '0x' + 'ab'.repeat(32);
const CASES: [method: string, params: unknown[], setting: string][] = [
  ['eth_sendRawTransactionSync', ['0x02'], 'chains[].sync.enabled'],
  ['txgate_getTransactionStatus', [HASH], 'chains[].track.enabled'],
  ['txgate_subscribe', ['transactionStatus'], 'chains[].track.enabled'],
  ['eth_sendRawTransactionConditional', ['0x02', {}], 'chains[].conditional.enabled'],
];

function laneAnswer(method: string, params: unknown[]): Promise<Record<string, any>> {
  const ws = new WebSocket(`ws://127.0.0.1:${gate.port}/`, { headers: { host: 'localhost', 'x-api-key': key }, perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once('open', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method, params })));
    ws.once('message', (d) => {
      resolve(JSON.parse(d.toString()));
      ws.close();
    });
    ws.once('error', reject);
  });
}

describe('method_not_found for an extension the chain leaves off', () => {
  for (const [method, params, setting] of CASES) {
    it(`${method}: 400, -32601, method_not_found, the message naming ${setting} (HTTP and the lane)`, async () => {
      const r = await rpc(gate.port, method, params, { key });
      assert.equal(r.status, 400);
      assert.deepEqual([r.json.error.code, r.json.error.data.reason], [-32601, 'method_not_found']);
      assert.ok(r.json.error.message.includes(method) && r.json.error.message.includes(setting), r.json.error.message);
      const f = await laneAnswer(method, params);
      assert.deepEqual(
        f.error,
        { ...r.json.error, data: { ...r.json.error.data, status: 400 } },
        'the lane answers the same (data.status carries the HTTP status)',
      );
    });
  }
  it('a method never served: the plain method_not_found', async () => {
    const r = await rpc(gate.port, 'eth_getBalance', [], { key });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.message, REASONS.method_not_found.message);
  });
});
