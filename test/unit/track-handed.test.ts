/**
 * An acceptance handed over by another worker thread (src/track/handed.ts, the batch the seam of
 * src/threads/track-seam.ts carries): written on the accepting thread, cloned as a MessagePort
 * clones it, read into the owner's entry: every field as the request and the forward told it
 * (times within the run's clock, a conditional send's bounds as bigints), several acceptances in
 * one flat batch, and a batch cut short read only as far as it is whole.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/log.js';
import { handedBounds, handedCount, handOver, type HandedBatch } from '../../src/track/handed.js';
import { Tracker } from '../../src/track/tracker.js';
import { ChainRpc } from '../../src/upstreams/chain-rpc/chain-rpc.js';

const RPC = 'http://127.0.0.1:9';
const chain = parseConfig({ chains: [{ chainId: 4663, hosts: ['x'], sequencers: [RPC], rpc: RPC, track: { enabled: true, pollMs: 60_000 } }] }, '.', {})
  .chains[0]!;
const rpc = new ChainRpc(RPC);
const tracker = new Tracker(chain, createLogger({ level: 'silent' }), { rpc });
after(async () => {
  await tracker.close();
  await rpc.close();
});
const hashOf = (i: number) => `0x${i.toString(16).padStart(64, '0')}`;
const request = (i: number, extra: object = {}) => ({
  hash: hashOf(i),
  rawHex: `0x02${'ab'.repeat(100)}`,
  account: i % 2 === 0 ? 'desk' : 'other',
  sender: i % 3 === 0 ? `0x${'12'.repeat(20)}` : null,
  t0: performance.now() - 40,
  ...extra,
});

describe('an acceptance handed over', () => {
  it("reads back as the accepting thread wrote it, several to a batch, through the port's clone", () => {
    const batch: HandedBatch = [];
    const start = Date.now();
    for (let i = 1; i <= 4; i++) handOver(batch, request(i), `https://seq-${i % 2}.example`, i === 4 ? 'lookup' : 'hash');
    handOver(batch, request(5, { conditional: { blockNumberMax: 120n, timestampMax: null } }), 'https://seq-1.example', 'resend');
    const copy = structuredClone(batch);
    assert.equal(handedCount(copy), 5);
    assert.deepEqual(handedBounds(copy, 4), { blockNumberMax: 120n, timestampMax: null });
    assert.equal(handedBounds(copy, 0), undefined);
    tracker.acceptedElsewhere(copy);
    for (let i = 1; i <= 5; i++) {
      const r = request(i);
      const e = tracker.own(r.account, r.hash);
      assert.ok(e !== null, `acceptance ${i} tracked for its account`);
      assert.equal(tracker.own(r.account === 'desk' ? 'other' : 'desk', r.hash), null);
      assert.equal(e.state, 'pending');
      assert.equal(e.sequencer, `https://seq-${i % 2}.example`);
      assert.equal(e.rule, i === 4 ? 'lookup' : i === 5 ? 'resend' : 'hash');
      assert.equal(e.sender, r.sender);
      assert.equal(e.raw, r.rawHex);
      assert.ok(e.acceptedAt >= start && e.acceptedAt <= Date.now(), `accepted at ${e.acceptedAt}`);
      // The request arrived ~40 ms before the acceptance (its wait travels as whole ms).
      assert.ok(e.acceptedAt - e.receivedAt >= 39 && e.acceptedAt - e.receivedAt < 5_000, `waited ${e.acceptedAt - e.receivedAt} ms`);
    }
  });

  it('a batch cut short is read as far as it is whole', () => {
    const batch: HandedBatch = [];
    handOver(batch, request(10), RPC, 'hash');
    handOver(batch, request(11), RPC, 'hash');
    const cut = batch.slice(0, batch.length - 3);
    assert.equal(handedCount(cut), 1);
    tracker.acceptedElsewhere(cut);
    assert.notEqual(tracker.own(request(10).account, hashOf(10)), null);
    assert.equal(tracker.own(request(11).account, hashOf(11)), null);
  });
});
