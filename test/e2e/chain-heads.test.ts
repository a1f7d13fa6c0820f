/**
 * A chain's one head source (src/upstreams/chain-rpc/chain-heads.ts), against a WebSocket peer
 * that speaks the chain RPC's `eth_subscribe` "newHeads" (its frames written as a node writes
 * them): opened on the first subscriber and shared by every other (one subscription), the
 * latest head read from the notification (number, hash, timestamp, when seen), every subscriber
 * told of every head, an unsubscribed one no longer; a notification that is no head is news all
 * the same but never the latest head. And its poll (the chain RPC's latest block, for a reader
 * of the latest head: the conditions check): only while a reader keeps it, one call at a time,
 * never while the subscription is live, its heads never news.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';
import { WebSocketServer } from 'ws';
import { createLogger } from '../../src/log/log.js';
import { ChainHeads } from '../../src/upstreams/chain-rpc/chain-heads.js';
import type { Answer, Upstream } from '../../src/upstreams/upstream.js';
import { eventually } from '../support/harness.js';

const HASH = (n: number) => '0x' + n.toString(16).padStart(64, '0');

describe('ChainHeads: one head source per chain', () => {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  after(() => new Promise((r) => wss.close(r)));
  let subscriptions = 0;
  /** The peer refuses the subscription (the source then waits seconds before trying again). */
  let refuse = false;
  const peers: import('ws').WebSocket[] = [];
  wss.on('connection', (ws) => {
    peers.push(ws);
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as { id: number; method: string };
      if (m.method !== 'eth_subscribe') return;
      subscriptions++;
      if (refuse) ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no newHeads here' } }));
      else ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: '0xabc' }));
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
      const before = performance.now();
      head({ number: '0x10', hash: HASH(16), timestamp: '0x64', parentHash: HASH(15) });
      await eventually(() => heads.count === 1, 5_000);
      const h = heads.head()!;
      assert.deepEqual([h.number, h.hash, h.timestamp], [16, HASH(16), 100]);
      assert.ok(h.seenAt >= before, 'seen when it arrived');
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

  it('while live, a reader of the latest head polls nothing: the subscription feeds it; once lost, the poll does', async () => {
    if (wss.address() === null) await new Promise((r) => wss.once('listening', r));
    const url = `ws://127.0.0.1:${(wss.address() as { port: number }).port}`;
    const rpc = new CountingRpc();
    const heads = new ChainHeads(url, silent, rpc);
    const reader = new AbortController();
    heads.keepLatest(20, reader.signal);
    try {
      await eventually(() => heads.live, 5_000);
      const polled = rpc.calls;
      head({ number: '0x30', hash: HASH(48), timestamp: '0x70' });
      await eventually(() => heads.head()?.number === 48, 5_000);
      // Ten poll intervals: none asked while the subscription is live.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(rpc.calls, polled, 'no poll while live');
      assert.equal(heads.head()!.number, 48);
      refuse = true;
      for (const p of peers.splice(0)) p.terminate();
      await eventually(() => !heads.live && heads.head()?.number === 7, 5_000);
      assert.ok(rpc.calls > polled, 'polled once the subscription was lost');
    } finally {
      refuse = false;
      reader.abort();
      heads.close();
    }
  });
});

const silent = createLogger({ level: 'silent' });

/** A chain RPC that answers the latest block (number 7) to each call it is asked, or holds the answer until told. */
class CountingRpc implements Upstream {
  calls = 0;
  hold = false;
  /** Each call's signal, in order. */
  readonly signals: (AbortSignal | undefined)[] = [];
  private readonly held: (() => void)[] = [];
  readonly url = 'http://127.0.0.1:1';
  readonly label = 'rpc';
  readonly labelJson = '"rpc"';
  async call(method: string, _params?: string, _times?: unknown, signal?: AbortSignal): Promise<Answer> {
    this.calls++;
    this.signals.push(signal);
    assert.equal(method, 'eth_getBlockByNumber');
    if (this.hold) await new Promise<void>((r) => this.held.push(r));
    return { kind: 'result', result: { number: '0x7', hash: HASH(7), timestamp: '0x5' } };
  }
  release(): void {
    for (const r of this.held.splice(0)) r();
  }
  async close(): Promise<void> {}
}

describe("ChainHeads' poll: the chain RPC's latest block, for a reader of the latest head", () => {
  it('nothing polled for a subscriber alone; a reader polls, its heads the latest but never news; the release stops it', async () => {
    const rpc = new CountingRpc();
    const heads = new ChainHeads(null, silent, rpc);
    let told = 0;
    const unsubscribe = heads.subscribe(() => told++);
    try {
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(rpc.calls, 0, 'a subscriber alone starts no poll');
      assert.equal(heads.live, false);
      const before = performance.now();
      const reader = new AbortController();
      heads.keepLatest(10, reader.signal);
      await eventually(() => rpc.calls >= 3, 5_000);
      const h = heads.head()!;
      assert.deepEqual([h.number, h.hash, h.timestamp], [7, HASH(7), 5]);
      assert.ok(h.seenAt >= before, 'seen when the answer came');
      assert.deepEqual([told, heads.count], [0, 0], 'a polled head is never news');
      reader.abort();
      const stopped = rpc.calls;
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(rpc.calls, stopped, 'no poll after the last reader let go');
    } finally {
      unsubscribe();
      heads.close();
    }
  });

  it('one call at a time: a slow answer is never queued behind', async () => {
    const rpc = new CountingRpc();
    rpc.hold = true;
    const heads = new ChainHeads(null, silent, rpc);
    const reader = new AbortController();
    heads.keepLatest(10, reader.signal);
    try {
      await eventually(() => rpc.calls === 1, 5_000);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(rpc.calls, 1, 'ten intervals passed with one call out: none added');
      assert.equal(heads.head(), null);
      rpc.hold = false;
      rpc.release();
      await eventually(() => rpc.calls >= 2 && heads.head() !== null, 5_000);
    } finally {
      reader.abort();
      heads.close();
    }
  });

  it("the shortest period any reader asks: a later reader's shorter one at once, the longer one again as it leaves; the last leaving stops the poll and cancels the call out", async () => {
    const rpc = new CountingRpc();
    const heads = new ChainHeads(null, silent, rpc);
    const slow = new AbortController();
    const fast = new AbortController();
    const later = new AbortController();
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    try {
      heads.keepLatest(60_000, slow.signal);
      await eventually(() => rpc.calls === 1 && heads.head() !== null, 5_000);
      await pause(100);
      assert.equal(rpc.calls, 1, "a minute's period: one poll, the first reader's at once");
      heads.keepLatest(10, fast.signal);
      await eventually(() => rpc.calls >= 5, 5_000);
      // A reader asking longer than the poll's period leaves it as it is.
      heads.keepLatest(60_000, later.signal);
      const before = rpc.calls;
      await eventually(() => rpc.calls >= before + 3, 5_000);
      fast.abort();
      await pause(20);
      const left = rpc.calls;
      await pause(100);
      assert.equal(rpc.calls, left, 'the only reader asking oftener gone: a minute again');
      // A reader whose interest has ended already adds nothing.
      heads.keepLatest(10, AbortSignal.abort());
      await pause(100);
      assert.equal(rpc.calls, left, 'an ended reader polls nothing');
      // A call out when the last reader leaves is cancelled.
      rpc.hold = true;
      const sooner = new AbortController();
      heads.keepLatest(10, sooner.signal);
      await eventually(() => rpc.calls === left + 1, 5_000);
      const out = rpc.signals.at(-1)!;
      assert.equal(out.aborted, false);
      for (const c of [slow, later]) c.abort();
      assert.equal(out.aborted, false, 'a reader is left: the call goes on');
      sooner.abort();
      assert.equal(out.aborted, true, 'the last reader gone: the call out cancelled');
    } finally {
      for (const c of [slow, fast, later]) c.abort();
      rpc.release();
      heads.close();
    }
  });
});
