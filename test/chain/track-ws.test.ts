/**
 * Tracking on the WebSocket transport, against a real anvil mining every second: the status query as
 * a frame, and `transactionStatus` subscriptions pushing each change of the account's
 * transactions (or of the hashes given), in order, each equal to what a status call answers;
 * another account's subscription hears nothing of them; the per-connection bound; nothing
 * survives a reconnect.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { eventually, newKey } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { rpc } from '../support/http.js';
import { signNext } from '../support/txs.js';
import { useGate } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const key = newKey();
const other = newKey();
const accounts = [
  { id: 'desk', keys: [key], allowUntipped: true },
  { id: 'other', keys: [other], allowUntipped: true },
];
let anvil: Anvil;

const gate = useGate(async () => {
  anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID, blockTime: 1 });
  return {
    chainB: false,
    sequencers: [anvil.url],
    accounts,
    config: { allowUntipped: true, websocket: { enabled: true } },
    // New heads from the chain RPC's subscription (the poll a slow backstop).
    chainA: { rpc: anvil.url, rpcWs: anvil.url.replace('http', 'ws'), track: { enabled: true, pollMs: 2000, maxSubscriptions: 2 } },
  };
});
after(async () => {
  await anvil.stop();
});

type Frame = Record<string, any>;

class Lane {
  readonly frames: Frame[] = [];
  private seq = 0;
  constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => this.frames.push(JSON.parse(d.toString())));
  }
  static open(k: string): Promise<Lane> {
    const ws = new WebSocket(`ws://127.0.0.1:${gate.port}/`, { headers: { host: 'localhost', 'x-api-key': k }, perMessageDeflate: false });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Lane(ws)));
      ws.once('error', reject);
    });
  }
  async call(method: string, params: unknown[]): Promise<Frame> {
    const id = ++this.seq;
    this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return (await eventually(() => this.frames.find((f) => f.id === id), 5000))!;
  }
  pushes(sub: string): Frame[] {
    return this.frames.filter((f) => f.method === 'txgate_subscription' && f.params.subscription === sub).map((f) => f.params.result);
  }
  close(): Promise<void> {
    return new Promise((r) => {
      this.ws.once('close', () => r());
      this.ws.close();
    });
  }
}

describe('tracking on the WebSocket transport', () => {
  it("a subscription pushes every change of the account's transactions, in order, each equal to the status answered", async () => {
    const desk = await Lane.open(key);
    const theirs = await Lane.open(other);
    const sub = (await desk.call('txgate_subscribe', ['transactionStatus'])).result as string;
    const otherSub = (await theirs.call('txgate_subscribe', ['transactionStatus'])).result as string;
    assert.match(sub, /^0x[0-9a-f]+$/);
    const sent = await desk.call('eth_sendRawTransaction', [await signNext(anvil.url, 1)]);
    const hash = sent.result as string;
    await eventually(() => desk.pushes(sub).some((p) => p.status === 'included'), 15_000);
    const pushed = desk.pushes(sub).filter((p) => p.hash === hash);
    assert.deepEqual(
      pushed.map((p) => [p.status, p.version]),
      [
        ['pending', 1],
        ['included', 2],
      ],
    );
    const asked = await desk.call('txgate_getTransactionStatus', [hash]);
    assert.deepEqual(asked.result, pushed.at(-1));
    const overHttp = await rpc(gate.port, 'txgate_getTransactionStatus', [hash], { key });
    assert.deepEqual(overHttp.json.result, pushed.at(-1));
    assert.deepEqual(theirs.pushes(otherSub), [], "another account's subscription hears nothing of them");
    assert.ok(
      gate.logs.some((l) => l.includes('chain RPC head subscription live')),
      'the watcher woke on the heads of the subscription',
    );
    await Promise.all([desk.close(), theirs.close()]);
  });

  it('by hashes: only those; unsubscribe stops it; at most maxSubscriptions per connection; bad params refused', async () => {
    const desk = await Lane.open(key);
    const raw = await signNext(anvil.url, 2);
    const { keccak256 } = await import('viem');
    const hash = keccak256(raw);
    const byHash = (await desk.call('txgate_subscribe', ['transactionStatus', [hash]])).result as string;
    const byNothing = (await desk.call('txgate_subscribe', ['transactionStatus', ['0x' + 'ee'.repeat(32)]])).result as string;
    const third = await desk.call('txgate_subscribe', ['transactionStatus']);
    assert.equal(third.error.data.reason, 'invalid_params');
    for (const params of [[], ['newHeads'], ['transactionStatus', []], ['transactionStatus', ['0x12']], ['transactionStatus', [hash], 1]]) {
      const r = await desk.call('txgate_subscribe', params);
      assert.equal(r.error.data.reason, 'invalid_params', JSON.stringify(params));
      assert.equal(r.error.data.status, 400);
    }
    await desk.call('eth_sendRawTransaction', [raw]);
    await eventually(() => desk.pushes(byHash).some((p) => p.status === 'included'), 15_000);
    assert.deepEqual(desk.pushes(byNothing), []);
    assert.equal((await desk.call('txgate_unsubscribe', [byHash])).result, true);
    assert.equal((await desk.call('txgate_unsubscribe', [byHash])).result, false);
    assert.match((await desk.call('txgate_subscribe', ['transactionStatus'])).result, /^0x/, 'a slot freed');
    await desk.close();
  });

  it('nothing survives a reconnect: a new connection starts with no subscription', async () => {
    const first = await Lane.open(key);
    await first.call('txgate_subscribe', ['transactionStatus']);
    await first.close();
    const again = await Lane.open(key);
    const hash = (await again.call('eth_sendRawTransaction', [await signNext(anvil.url, 3)])).result as string;
    // Once it is included, every change it had would have been pushed to a subscription.
    await eventually(async () => (await again.call('txgate_getTransactionStatus', [hash])).result.status === 'included', 15_000);
    assert.deepEqual(
      again.frames.filter((f) => f.method === 'txgate_subscription'),
      [],
    );
    await again.close();
  });
});
