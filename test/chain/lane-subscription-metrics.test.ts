/**
 * The WebSocket transport's `txgate_subscribe` / `txgate_unsubscribe` frames, on a tracked chain
 * (a real anvil as its chain RPC): counted in /metrics under `method="other"` as
 * docs/operations.md says (not `unparsed`), and logged with their own method name and the
 * message `request`: `accepted` is the audit log's word for an accepted transaction alone.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { eventually, newKey } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { send } from '../support/http.js';
import { useGate } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const key = newKey();
let anvil: Anvil;
const gate = useGate(async () => {
  anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
  return {
    chainB: false,
    internal: true,
    sequencers: [anvil.url],
    accounts: [{ id: 'desk', keys: [key], allowUntipped: true }],
    config: { allowUntipped: true, websocket: { enabled: true } },
    chainA: { rpc: anvil.url, track: { enabled: true } },
  };
});
after(async () => {
  await anvil.stop();
});

async function frames(calls: [string, unknown[]][]): Promise<Record<string, any>[]> {
  const ws = new WebSocket(`ws://127.0.0.1:${gate.port}/`, { headers: { host: 'localhost', 'x-api-key': key }, perMessageDeflate: false });
  const got: Record<string, any>[] = [];
  ws.on('message', (d) => got.push(JSON.parse(d.toString())));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const answers: Record<string, any>[] = [];
  for (const [i, [method, params]] of calls.entries()) {
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: i + 1, method, params }));
    answers.push((await eventually(() => got.find((f) => f.id === i + 1), 5000))!);
  }
  await new Promise<void>((r) => {
    ws.once('close', () => r());
    ws.close();
  });
  return answers;
}

const sample = (text: string, labels: string) =>
  Number(new RegExp(`^txgate_requests_total\\{${labels.replace(/[{}]/g, '\\$&')}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);

describe('lane subscription frames: metrics and log', () => {
  it('two subscribes and an unsubscribe: 3 under method="other" (none unparsed), each logged by its method as a request', async () => {
    const metrics = async () => (await send({ port: gate.internalPort!, method: 'GET', path: '/metrics', host: '127.0.0.1' })).text;
    const before = await metrics();
    const [a, b, c] = await frames([
      ['txgate_subscribe', ['transactionStatus']],
      ['txgate_subscribe', ['transactionStatus']],
      ['txgate_unsubscribe', ['0x1']],
    ]);
    assert.deepEqual([typeof a!.result, typeof b!.result, c!.result], ['string', 'string', true]);
    const text = await eventually(async () => {
      const t = await metrics();
      return sample(t, 'method="other",status="200",reason="ok",transport="ws"') - sample(before, 'method="other",status="200",reason="ok",transport="ws"') ===
        3
        ? t
        : undefined;
    }, 5000);
    assert.ok(text !== undefined);
    assert.equal(
      sample(text, 'method="unparsed",status="200",reason="ok",transport="ws"'),
      sample(before, 'method="unparsed",status="200",reason="ok",transport="ws"'),
      'none counted as unparsed',
    );
    const lines = await eventually(() => {
      const l = gate.logs.map((x) => JSON.parse(x)).filter((x) => x.method === 'txgate_subscribe' || x.method === 'txgate_unsubscribe');
      return l.length === 3 ? l : undefined;
    }, 5000);
    assert.deepEqual(
      lines!.map((l) => [l.method, l.msg]),
      [
        ['txgate_subscribe', 'request'],
        ['txgate_subscribe', 'request'],
        ['txgate_unsubscribe', 'request'],
      ],
    );
    assert.ok(!gate.logs.some((x) => /"method":"ws"/.test(x) && /"msg":"accepted"/.test(x)), 'no frame logged as an accepted "ws" request');
  });
});
