/**
 * keccak-256 (src/base/keccak.ts, our own WebAssembly): the published digests, and every length
 * from 0 to three blocks and more, random bytes, against hash-wasm's keccak-256; in parts and as
 * hex the same digest; an input larger than the memory grows it and still hashes right.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createKeccak } from 'hash-wasm';
import { Keccak256 } from '../../src/base/keccak.js';

describe('keccak-256', () => {
  const k = new Keccak256();
  let reference: (d: Uint8Array) => string;
  before(async () => {
    const h = await createKeccak(256);
    reference = (d) => h.init().update(d).digest('hex');
  });
  const hex = (d: Uint8Array) => Buffer.from(d).toString('hex');

  it('the published digests: the empty input and "abc"', () => {
    assert.equal(hex(k.digest(new Uint8Array())), 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    assert.equal(hex(k.digest(Buffer.from('abc'))), '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
  });

  it('every length from 0 to 3 blocks and more (the padding at each offset of a block) agrees with hash-wasm', () => {
    for (let len = 0; len <= 3 * 136 + 8; len++) {
      const d = randomBytes(len);
      const want = reference(d);
      assert.equal(hex(k.digest(d)), want, `length ${len}`);
      assert.equal(k.hex(d), '0x' + want, `hex, length ${len}`);
    }
  });

  it('in three parts, the digest of their concatenation; an input larger than the memory grows it', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 300 }), (a, b, c) => {
        return hex(k.digestParts(a, b, c)) === reference(Buffer.concat([a, b, c]));
      }),
      { numRuns: 500 },
    );
    const big = randomBytes(200_000);
    assert.equal(hex(k.digest(big)), reference(big));
    const small = randomBytes(100);
    assert.equal(hex(k.digest(small)), reference(small), 'after the memory grew');
  });
});
