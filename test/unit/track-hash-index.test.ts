/**
 * The status table's index by hash (src/track/hash-index.ts): the same answers as a map keyed by
 * the whole string, whatever the hashes (keccak's, a test's that share their last characters, a
 * grinder's that share a key), through adds (replacing, and only where not held), and removals
 * by identity.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { HashIndex, keyOf } from '../../src/track/hash-index.js';

interface Item {
  readonly hash: string;
  readonly n: number;
}

/** Random operations on the index and on a Map beside it: every answer, size and listing agrees. */
function agrees(hashes: readonly string[], ops: number, seed: number): void {
  let s = seed;
  const rand = (k: number) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % k;
  };
  const index = new HashIndex<Item>();
  const model = new Map<string, Item>();
  for (let i = 0; i < ops; i++) {
    // A new string each time, equal in content: the index compares contents, never identities of strings.
    const hash = [...hashes[rand(hashes.length)]!].join('');
    const op = rand(5);
    if (op <= 1) {
      const item = { hash, n: i };
      index.set(item);
      model.set(hash, item);
    } else if (op === 4) {
      // Added only where the hash is not held; the one held stays.
      const item = { hash, n: i };
      assert.equal(index.addAt(keyOf(hash), item), !model.has(hash));
      if (!model.has(hash)) model.set(hash, item);
    } else if (op === 2) {
      const held = model.get(hash);
      // Removal is by identity: another item of the same hash is not removed.
      assert.equal(index.delete({ hash, n: -1 }), false);
      assert.equal(index.delete(held ?? { hash, n: -2 }), held !== undefined);
      model.delete(hash);
    } else assert.equal(index.get(hash), model.get(hash));
    assert.equal(index.size, model.size);
  }
  const listed = [...index.values()];
  assert.equal(listed.length, model.size);
  assert.deepEqual(new Set(listed), new Set(model.values()));
  for (const [hash, item] of model) assert.equal(index.get(hash), item);
}

const keccakLike = (n: number) => Array.from({ length: n }, () => `0x${randomBytes(32).toString('hex')}`);

describe('HashIndex', () => {
  it('keys a hash by its last characters, either case, as a small integer', () => {
    const h = `0x${'ab'.repeat(28)}0123cdef`;
    assert.equal(keyOf(h), 0x0123cdef >>> 2);
    assert.equal(keyOf(h.toUpperCase()), keyOf(h));
    for (const x of keccakLike(100)) assert.ok(Number.isInteger(keyOf(x)) && keyOf(x) >= 0 && keyOf(x) < 2 ** 30);
    // Any string gives a key (a status question's hash is anything a client sent).
    for (const x of ['', '0x', 'zz', '\u{1F600}'.repeat(9)]) assert.ok(Number.isInteger(keyOf(x)));
  });

  it('agrees with a map of whole strings: random hashes', () => agrees(keccakLike(300), 5_000, 7));

  it('agrees with a map of whole strings: hashes that share a key, past a bucket', () => {
    // 40 hashes with the same last 8 characters (one key), beside 40 that differ there.
    const shared = Array.from({ length: 40 }, (_, i) => `0x${i.toString(16).padStart(56, '0')}feedbeef`);
    assert.equal(new Set(shared.map(keyOf)).size, 1);
    agrees([...shared, ...keccakLike(40)], 5_000, 11);
  });

  it('a test-style hash (a number padded with zeros) keys apart from its neighbours', () => {
    const padded = Array.from({ length: 1000 }, (_, i) => `0x${i.toString(16).padStart(64, '0')}`);
    assert.equal(new Set(padded.map(keyOf)).size, 1000 / 4);
    agrees(padded, 5_000, 13);
  });
});
