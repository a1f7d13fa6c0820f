/**
 * The flashblocks readers (src/flashblocks/slice.ts; the sync answer, src/sync/preconfirmed.ts)
 * fed arbitrary values: a frame of any JSON never throws and reads as a slice only when it has
 * the shape op-rbuilder pins (a payload id of 8 bytes, an index 0 to 1,000, whole-byte hex
 * transactions, a base block number at index 0); a receipt of any shape gives a status of 0, 1
 * or none; the order of any sequence of slices reads each index of a payload at most once,
 * ascending; a preconfirmed receipt keeps the edge's own fields whatever the slice's receipt
 * carries.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Building, readSlice, receiptOf, type Slice } from '../../src/flashblocks/slice.js';
import { preconfirmedReceipt, ZERO_HASH } from '../../src/sync/preconfirmed.js';

const hex = (min: number, max: number) => fc.uint8Array({ minLength: min, maxLength: max }).map((b) => '0x' + Buffer.from(b).toString('hex'));
const PIDS = ['0x0a0a0a0a0a0a0a0a', '0x0b0b0b0b0b0b0b0b', '0xZZ', '0x0c'];

/** Values near a slice's shape, with any field wrong or missing. */
const nearSlice = fc.record(
  {
    payload_id: fc.oneof(fc.constantFrom(...PIDS), fc.anything()),
    index: fc.oneof(fc.integer({ min: -2, max: 1_002 }), fc.double(), fc.string()),
    base: fc.oneof(fc.record({ block_number: fc.oneof(hex(1, 8), fc.integer(), fc.string()) }), fc.anything()),
    diff: fc.oneof(fc.record({ transactions: fc.oneof(fc.array(fc.oneof(hex(1, 40), fc.string(), fc.integer())), fc.anything()) }), fc.anything()),
    metadata: fc.oneof(fc.record({ block_number: fc.oneof(fc.integer(), fc.double(), fc.string()), receipts: fc.anything() }), fc.anything()),
  },
  { requiredKeys: [] },
);

describe('flashblocks readers never throw, and read only what the builders write', () => {
  it('readSlice: any value; a slice only of the pinned shape', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.jsonValue(), nearSlice), (v) => {
        const s = readSlice(v);
        if (s === null) return;
        assert.match(s.payloadId, /^0x[0-9a-f]{16}$/);
        assert.ok(Number.isSafeInteger(s.index) && s.index >= 0 && s.index <= 1_000);
        for (const t of s.txs) assert.match(t, /^0x([0-9a-fA-F]{2})+$/);
        if (s.index === 0) assert.ok(Number.isSafeInteger(s.baseNumber));
        else assert.equal(s.baseNumber, null);
      }),
      { numRuns: 3_000 },
    );
  });

  it('receiptOf: a receipt of any shape, under any key; a status 0, 1 or none', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(fc.constant('0xaa'), fc.string()), fc.anything()), fc.anything(), (receipts, inner) => {
        for (const r of [receipts, { '0xaa': inner }, { '0xaa': { Eip1559: inner } }, { '0xaa': { Legacy: inner, Extra: 1 } }]) {
          const got = receiptOf(r, '0xaa');
          if (got !== null) assert.ok(got.status === 0 || got.status === 1 || got.status === null);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('Building: any sequence of slices reads each index of a payload at most once, in ascending order', () => {
    const slice = fc.record({
      payloadId: fc.constantFrom(...PIDS.slice(0, 2)),
      index: fc.integer({ min: 0, max: 12 }),
      baseNumber: fc.integer({ min: 0, max: 5 }),
      metaNumber: fc.option(fc.integer({ min: 0, max: 5 })),
    });
    fc.assert(
      fc.property(fc.array(slice, { maxLength: 60 }), (seq) => {
        const b = new Building();
        let last: { pid: string; index: number } | null = null;
        for (const x of seq) {
          const s: Slice = { ...x, baseNumber: x.index === 0 ? x.baseNumber : null, txs: [], receipts: null };
          const p = b.place(s);
          if (p.kind !== 'read') continue;
          if (s.index > 0 && last !== null && last.pid === s.payloadId) assert.ok(s.index > last.index, JSON.stringify(seq));
          last = { pid: s.payloadId, index: s.index };
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it("preconfirmedReceipt: the edge's hash, block number and zero block hash whatever the slice's receipt carries", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.anything()), fc.constantFrom<0 | 1>(0, 1), (fields, status) => {
        const r = preconfirmedReceipt({
          hash: '0x' + 'ab'.repeat(32),
          number: 7,
          index: 1,
          position: null,
          receipt: { status, fields: { ...fields, transactionHash: '0xevil', blockHash: '0xevil', blockNumber: '0xevil' } },
          seenAt: 0,
        })!;
        assert.equal(r.transactionHash, '0x' + 'ab'.repeat(32));
        assert.equal(r.blockHash, ZERO_HASH);
        assert.equal(r.blockNumber, '0x7');
        assert.equal(r.status, status === 1 ? '0x1' : '0x0');
      }),
      { numRuns: 1_000 },
    );
  });
});
