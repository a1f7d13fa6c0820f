/**
 * The queue every upstream keeps its waiting calls in (src/upstreams/queue.ts): first in, first
 * out through the compaction, peek and at leave in place, clear hands back what was left.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Queue } from '../../src/upstreams/queue.js';
import { upstreamUrl } from '../../src/upstreams/registry.js';

describe('Queue', () => {
  it('takes items in the order pushed, whatever the mix of pushes and takes (against an array)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.constant(-1), fc.constant(-2)), { maxLength: 400 }), (ops) => {
        const q = new Queue<number>();
        const model: number[] = [];
        for (const op of ops) {
          if (op === -1) assert.equal(q.shift(), model.shift());
          else if (op === -2) {
            assert.equal(q.peek(), model[0]);
            for (let k = 0; k <= model.length; k++) assert.equal(q.at(k), model[k]);
          }
          // a run of pushes, so that the head passes the compaction threshold
          else for (let i = 0; i < op % 7; i++) q.push(op + i), model.push(op + i);
          assert.equal(q.length, model.length);
        }
        assert.deepEqual(q.clear(), model);
        assert.equal(q.length, 0);
        assert.equal(q.shift(), undefined);
      }),
    );
  });

  it('keeps its order across a compaction (more than 1,024 taken)', () => {
    const q = new Queue<number>();
    for (let i = 0; i < 3000; i++) q.push(i);
    for (let i = 0; i < 2000; i++) assert.equal(q.shift(), i);
    q.push(3000);
    assert.equal(q.length, 1001);
    assert.equal(q.peek(), 2000);
    assert.deepEqual(q.clear().slice(-2), [2999, 3000]);
  });
});

describe('the registry of upstream kinds', () => {
  it('accepts the URL of every kind served, normalised, and nothing else', () => {
    assert.equal(upstreamUrl('http://127.0.0.1:8545'), 'http://127.0.0.1:8545/');
    assert.equal(upstreamUrl('wss://seq.example/rpc'), 'wss://seq.example/rpc');
    for (const bad of ['ftp://seq.example', 'seq.example:8545', '', 42, null, 'unix:/run/seq.sock']) assert.equal(upstreamUrl(bad), undefined, String(bad));
  });
});
