/**
 * The token bucket (GCRA) with an injected clock: refill, burst cap, waits, Retry-After rounding,
 * sweep. The shared tx table: claims, and a waiting thread woken by another thread's settle.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { RateLimiter, retryAfterSeconds } from '../../src/limits/rate-limiter.js';
import { allocateTable, SharedTxTable } from '../../src/limits/shared-tables.js';

function clocked() {
  let now = 1000;
  const limiter = new RateLimiter(() => now);
  return { limiter, advance: (ms: number) => (now += ms) };
}

describe('rate limiter', () => {
  it('allows exactly burst requests at once, with the remaining count going down', () => {
    const { limiter } = clocked();
    const got = Array.from({ length: 5 }, () => limiter.take('a/1', 10, 3));
    assert.deepEqual(got.slice(0, 3), [2, 1, 0]);
    assert.ok(got[3]! < 0 && got[4]! < 0);
  });

  it('refills at perSecond', () => {
    const { limiter, advance } = clocked();
    for (let i = 0; i < 3; i++) limiter.take('a/1', 10, 3);
    assert.ok(limiter.take('a/1', 10, 3) < 0);
    advance(99);
    assert.ok(limiter.take('a/1', 10, 3) < 0, 'not yet after 99 ms at 10/s');
    advance(1);
    assert.equal(limiter.take('a/1', 10, 3), 0, 'one token after 100 ms');
  });

  it('never holds more than burst tokens after a long idle', () => {
    const { limiter, advance } = clocked();
    limiter.take('a/1', 10, 3);
    advance(60_000);
    const got = Array.from({ length: 4 }, () => limiter.take('a/1', 10, 3));
    assert.deepEqual(got.slice(0, 3), [2, 1, 0]);
    assert.ok(got[3]! < 0);
  });

  it('reports the wait until the next token', () => {
    const { limiter, advance } = clocked();
    limiter.take('a/1', 2, 1); // 500 ms per token
    advance(200);
    const r = limiter.take('a/1', 2, 1);
    assert.ok(Math.abs(-r - 300) < 1e-6, `wait ${-r}`);
  });

  it('a refused request spends nothing', () => {
    const { limiter, advance } = clocked();
    limiter.take('a/1', 1, 1);
    for (let i = 0; i < 10; i++) assert.ok(limiter.take('a/1', 1, 1) < 0);
    advance(1000);
    assert.equal(limiter.take('a/1', 1, 1), 0);
  });

  it('keeps buckets apart per key (account and chain)', () => {
    const { limiter } = clocked();
    limiter.take('a/1', 1, 1);
    assert.ok(limiter.take('a/1', 1, 1) < 0);
    assert.equal(limiter.take('a/2', 1, 1), 0);
    assert.equal(limiter.take('b/1', 1, 1), 0);
  });

  it('Retry-After is whole seconds, rounded up, at least 1', () => {
    assert.equal(retryAfterSeconds(1), 1);
    assert.equal(retryAfterSeconds(999), 1);
    assert.equal(retryAfterSeconds(1000), 1);
    assert.equal(retryAfterSeconds(1001), 2);
    assert.equal(retryAfterSeconds(0), 1);
  });

  it('the sweep drops only full (idle) buckets, bounding memory without changing outcomes', () => {
    const { limiter, advance } = clocked();
    limiter.take('idle', 10, 1);
    limiter.take('busy', 1, 5);
    advance(150);
    assert.equal(limiter.sweep(), 1);
    assert.equal(limiter.size, 1);
    assert.equal(limiter.take('idle', 10, 1), 0);
  });
});

describe('shared tx table (across threads)', () => {
  it('claim / peek / settle: one claimant; accepted until the TTL; released otherwise', () => {
    const t = new SharedTxTable(allocateTable(1024));
    assert.equal(t.claim('0xaa'), 'claimed');
    assert.equal(t.claim('0xaa'), 'in_flight');
    assert.equal(t.peek('0xaa'), 'in_flight');
    t.settle('0xaa', true, 60_000);
    assert.equal(t.peek('0xaa'), 'accepted');
    assert.equal(t.claim('0xaa'), 'accepted');
    assert.equal(t.claim('0xbb'), 'claimed');
    t.settle('0xbb', false, 60_000);
    assert.equal(t.peek('0xbb'), 'none');
  });

  it('a thread waiting on a hash in flight is woken by the settle in another thread, not by its timeout', async () => {
    const buffers = allocateTable(1024);
    const t = new SharedTxTable(buffers);
    assert.equal(t.claim('0xcc'), 'claimed');
    const mark = t.mark();
    const waiting = t.settled(mark, 30_000);
    // Another thread settles the hash after a moment.
    const code = `
      const { workerData } = require('node:worker_threads');
      setTimeout(async () => {
        const { SharedTxTable } = await import(workerData.module);
        new SharedTxTable(workerData.buffers).settle('0xcc', true, 60_000);
      }, 50);`;
    const w = new Worker(code, { eval: true, workerData: { buffers, module: new URL('../../src/limits/shared-tables.js', import.meta.url).href } });
    assert.equal(await waiting, 'ok', 'woken by Atomics.notify (a timeout would say "timed-out")');
    assert.equal(t.peek('0xcc'), 'accepted');
    await w.terminate();
    // A mark taken before a settle that already happened resolves at once.
    assert.equal(await t.settled(mark, 30_000), 'not-equal');
  });
});
