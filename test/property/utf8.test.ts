/**
 * A body's text (src/front/utf8.ts) is what Buffer's UTF-8 decoding gives for the same bytes:
 * every invalid sequence (overlong, surrogate, truncated, out of range, a stray continuation)
 * replaced alike, a byte-order mark kept as text.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { utf8Text } from '../../src/front/utf8.js';

const PIECES = [
  [0xef, 0xbb, 0xbf],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xe2, 0x82],
  [0xff],
  [0x80],
  [0xf0, 0x9f, 0x98, 0x80],
  [0xc3, 0xa9],
  [0xe0, 0x80, 0xaf],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
];
const bytes = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0, max: 255 }).map((b) => [b]),
      fc.constantFrom(...PIECES),
    ),
    { maxLength: 24 },
  )
  .map((parts) => new Uint8Array(parts.flat()));

describe('utf8Text', () => {
  it("equals Buffer's decoding over arbitrary bytes, from an ArrayBuffer or a view (property)", () => {
    fc.assert(
      fc.property(bytes, (b) => {
        const expected = Buffer.from(b).toString('utf8');
        assert.equal(utf8Text(b.buffer), expected);
        assert.equal(utf8Text(b), expected);
      }),
      { numRuns: 20_000 },
    );
  });

  it('keeps a byte-order mark as text', () => {
    assert.equal(utf8Text(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d])), '\ufeff{}');
  });
});
