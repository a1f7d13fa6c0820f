/**
 * The in-flight table (src/base/in-flight.ts, the duplicates table's sends in flight): under any
 * sequence of sets, gets and deletes it answers exactly as a Map does, through growth and
 * through deletions that shift the runs of colliding keys (keys chosen to share their last
 * characters, the part its slots come from, as well as hashes).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { InFlight } from '../../src/base/in-flight.js';

const hash = fc.stringMatching(/^0x[0-9a-f]{64}$/);
// Few keys, many sharing their last eight characters (the same slot), some short.
const colliding = fc.constantFrom('a', 'b', '', '1deadbeef', '2deadbeef', '3deadbeef', 'xxdeadbeef', 'cafe0000', 'dcafe0000', 'ecafe0000');
const op = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key: fc.oneof(colliding, hash), v: fc.integer() }),
  fc.record({ kind: fc.constant('delete' as const), key: fc.oneof(colliding, hash) }),
  fc.record({ kind: fc.constant('get' as const), key: fc.oneof(colliding, hash) }),
);

describe('in-flight table', () => {
  it('answers as a Map does for any sequence of sets, deletes and gets (property)', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), fc.integer({ min: 1, max: 40 }), (ops, capacity) => {
        const t = new InFlight<number>(capacity);
        const m = new Map<string, number>();
        for (const o of ops) {
          if (o.kind === 'set') {
            t.set(o.key, o.v);
            m.set(o.key, o.v);
          } else if (o.kind === 'delete') assert.equal(t.delete(o.key), m.delete(o.key));
          assert.equal(t.get(o.key), m.get(o.key));
          assert.equal(t.has(o.key), m.has(o.key));
          assert.equal(t.size, m.size);
        }
        for (const [k, v] of m) assert.equal(t.get(k), v);
      }),
      { numRuns: 500 },
    );
  });

  it('many in flight at once: grows, and every one is found until deleted', () => {
    const t = new InFlight<number>(8);
    const keys = Array.from({ length: 5000 }, (_, i) => `0x${i.toString(16).padStart(64, '0')}`);
    for (const [i, k] of keys.entries()) t.set(k, i);
    for (const [i, k] of keys.entries()) assert.equal(t.get(k), i);
    for (let i = 0; i < keys.length; i += 2) assert.ok(t.delete(keys[i]!));
    for (const [i, k] of keys.entries()) assert.equal(t.get(k), i % 2 === 0 ? undefined : i);
    assert.equal(t.size, 2500);
  });
});
