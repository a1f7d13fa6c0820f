/**
 * A chain's one head source (src/upstreams/chain-rpc/chain-heads.ts), against a WebSocket peer
 * that speaks the chain RPC's `eth_subscribe` "newHeads" (its frames written as a node writes
 * them): opened on the first subscriber and shared by every other (one subscription), the
 * latest head read from the notification (number, hash, timestamp, when seen), every subscriber
 * told of every head, an unsubscribed one no longer; a notification that is no head is news all
 * the same but never the latest head.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { WebSocketServer } from 'ws';
import { createLogger } from '../../src/log/log.js';
import { ChainHeads } from '../../src/upstreams/chain-rpc/chain-heads.js';
import { eventually } from '../support/harness.js';

const HASH = (n: number) => '0x' + n.toString(16).padStart(64, '0');

describe('ChainHeads: one head source per chain', () => {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  after(() => new Promise((r) => wss.close(r)));
  let subscriptions = 0;
  const peers: import('ws').WebSocket[] = [];
  wss.on('connection', (ws) => {
    peers.push(ws);
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as { id: number; method: string };
      if (m.method !== 'eth_subscribe') return;
      subscriptions++;
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: '0xabc' }));
    });
  });
  const head = (result: unknown) => {
    for (const p of peers) p.send(JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription: '0xabc', result } }));
  };

  it('one subscription for every subscriber; the latest head read; an unsubscribed listener is told no more', async () => {
    if (wss.address() === null) await new Promise((r) => wss.once('listening', r));
    const url = `ws://127.0.0.1:${(wss.address() as { port: number }).port}`;
    const heads = new ChainHeads(url, createLogger({ level: 'silent' }));
    try {
      assert.equal(heads.head(), null);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(subscriptions, 0, 'nothing opened before a subscriber');
      let a = 0;
      let b = 0;
      heads.subscribe(() => a++);
      const unsubscribeB = heads.subscribe(() => b++);
      await eventually(() => heads.live, 5_000);
      assert.equal(subscriptions, 1, 'one subscription for both');
      const before = Date.now();
      head({ number: '0x10', hash: HASH(16), timestamp: '0x64', parentHash: HASH(15) });
      await eventually(() => heads.count === 1, 5_000);
      const h = heads.head()!;
      assert.deepEqual([h.number, h.hash, h.timestamp], [16, HASH(16), 100]);
      assert.ok(h.seenAt >= before);
      const [a1, b1] = [a, b];
      assert.ok(a1 >= 1 && b1 >= 1, 'both told');
      unsubscribeB();
      // A reorg's head lower than the last is the latest; a notification that is no head is news, never the head.
      head({ number: '0xf', hash: HASH(99), timestamp: '0x65' });
      head({ number: 'not a number', hash: HASH(1), timestamp: '0x1' });
      await eventually(() => heads.count === 3, 5_000);
      assert.deepEqual([heads.head()!.number, heads.head()!.hash], [15, HASH(99)]);
      assert.equal(a, a1 + 2, 'the subscriber still there told of both');
      assert.equal(b, b1, 'the unsubscribed one told of neither');
      assert.equal(subscriptions, 1);
    } finally {
      heads.close();
    }
  });
});
