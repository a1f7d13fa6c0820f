/**
 * WsUpstream's use of its connections, driven directly against a scripted WebSocket stub: calls
 * are spread over every open connection (not all on the first while the others idle), and calls
 * multiplexed on one connection are neither held back by an unanswered one nor by a frame being
 * written before them.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';
import { WsUpstream } from '../../src/upstreams/ws/ws-upstream.js';

const times = { timeoutMs: 5_000, queueMs: 5_000 };

/** Counts the calls seen on each server-side connection; answers each by `answer` (null: hold it). */
class Stub {
  readonly wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  readonly perConnection: number[] = [];
  readonly held: Array<{ ws: WebSocket; id: number }> = [];
  answer: (m: { id: number; params: unknown[] }) => boolean = () => true;
  constructor() {
    this.wss.on('connection', (ws) => {
      const k = this.perConnection.push(0) - 1;
      ws.on('error', () => {});
      ws.on('message', (d) => {
        const m = JSON.parse(String(d)) as { id: number; params: unknown[] };
        this.perConnection[k]!++;
        if (this.answer(m)) ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: `0x${m.id.toString(16)}` }));
        else this.held.push({ ws, id: m.id });
      });
    });
  }
  async url(): Promise<string> {
    if (this.wss.address() === null) await new Promise((r) => this.wss.once('listening', r));
    return `ws://127.0.0.1:${(this.wss.address() as { port: number }).port}`;
  }
  async connections(n: number): Promise<void> {
    for (let k = 0; k < 200 && this.perConnection.length < n; k++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(this.perConnection.length, n);
    // The server sees a connection before the client's 'open'.
    await new Promise((r) => setTimeout(r, 50));
  }
  stop(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    return new Promise((r) => this.wss.close(() => r()));
  }
}

const opened: Array<{ up: WsUpstream; stub: Stub }> = [];
after(async () => {
  for (const { up, stub } of opened) {
    await up.close(true);
    await stub.stop();
  }
});
async function start(conns: number): Promise<{ up: WsUpstream; stub: Stub }> {
  const stub = new Stub();
  const up = new WsUpstream(await stub.url(), 256, conns);
  opened.push({ up, stub });
  await stub.connections(conns);
  return { up, stub };
}

describe('WsUpstream: its connections', () => {
  it('calls one after another (each answered before the next) go round every connection, not all on the first', async () => {
    const { up, stub } = await start(4);
    for (let k = 0; k < 40; k++) {
      const a = await up.call('eth_sendRawTransaction', '["0x00"]', times);
      assert.equal(a.kind, 'result');
    }
    assert.deepEqual(stub.perConnection, [10, 10, 10, 10]);
  });

  it('calls issued together are spread evenly over the connections', async () => {
    const { up, stub } = await start(3);
    const answers = await Promise.all(Array.from({ length: 30 }, () => up.call('eth_sendRawTransaction', '["0x00"]', times)));
    assert.ok(answers.every((a) => a.kind === 'result'));
    assert.deepEqual(stub.perConnection, [10, 10, 10]);
  });

  it('on one connection: a frame written while others are being written is sent at once, and an answer is not held behind an unanswered call', async () => {
    const { up, stub } = await start(1);
    // The stub answers nothing until all 50 frames, handed to the socket in one turn, have arrived.
    const ids: number[] = [];
    let release!: () => void;
    const all = new Promise<void>((r) => (release = r));
    stub.answer = (m) => {
      ids.push(m.id);
      if (ids.length === 50) release();
      return false;
    };
    const calls = Array.from({ length: 50 }, () => up.call('eth_sendRawTransaction', '["0x00"]', times));
    await all;
    assert.equal(stub.held.length, 50);
    // Answer the last one only: it resolves while the 49 before it on the same connection wait.
    const last = stub.held.pop()!;
    last.ws.send(JSON.stringify({ jsonrpc: '2.0', id: last.id, result: '0x01' }));
    const first = await Promise.race(calls.map((c, k) => c.then((a) => ({ k, a }))));
    assert.equal(first.k, 49);
    assert.equal(first.a.kind, 'result');
    for (const h of stub.held) h.ws.send(JSON.stringify({ jsonrpc: '2.0', id: h.id, result: '0x02' }));
    assert.ok((await Promise.all(calls)).every((a) => a.kind === 'result'));
  });
});
