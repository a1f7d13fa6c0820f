/**
 * The shared ring of the tracker's hand-off (src/track/seam/ring.ts, records of
 * src/track/seam/handed.ts; docs/tracking.md#the-hand-off), fed arbitrary sequences: records of any
 * size written and drained in any interleaving are read whole, once, in order, and a ring refuses
 * a record only for want of room (an empty ring takes any record no larger than half of it, and a larger one once the
 * reader has passed the skip its refusal left); and a ring whose bytes are overwritten with anything never
 * makes the reader throw, loop or read past the writer's cursor (what it cannot read it skips,
 * and the writer then sends its names again).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { ForwardRequest } from '../../src/forward/parts.js';
import { ACCEPTED, HandedReader, HandedWriter } from '../../src/track/seam/handed.js';
import { allocateRing, HEADER, RingReader, RingWriter } from '../../src/track/seam/ring.js';

/** The request an acceptance record reads back into, or null where it does not read as one. */
function requestAt(handed: HandedReader, at: number, size: number): ForwardRequest | null {
  let got: ForwardRequest | null = null;
  handed.take(at, size, { acceptedElsewhere: (req) => (got = req) });
  return got;
}

/** A step: write a record of `bytes` payload bytes, or drain. */
const step = fc.oneof(fc.record({ write: fc.integer({ min: 0, max: 700 }) }), fc.constant({ drain: true as const }));

describe('the shared ring, fuzzed', () => {
  it('records of any size, written and drained in any order, are read whole, once, in order', () => {
    fc.assert(
      fc.property(fc.constantFrom(256, 1024, 4096), fc.array(step, { maxLength: 300 }), (cap, steps) => {
        const sab = allocateRing(cap);
        const w = new RingWriter(sab);
        const r = new RingReader(sab);
        let next = 0;
        const written: number[] = [];
        const read: number[] = [];
        const drain = () => {
          const skipped = r.drain((at, size, kind) => {
            assert.equal(kind, 7);
            const n = r.u32[(at >> 2) + 2]!;
            assert.equal(size, RingWriter.size(12 + (n % 701)));
            // Every payload byte as written.
            for (let i = 12; i < 12 + (n % 701); i++) assert.equal(r.buf[at + i], (n + i) & 0xff);
            read.push(n);
          });
          assert.equal(skipped, 0);
        };
        for (const s of steps) {
          if ('drain' in s) {
            drain();
            continue;
          }
          const n = next * 701 + s.write;
          const bytes = n % 701;
          const size = RingWriter.size(12 + bytes);
          let at = w.begin(size);
          if (at < 0) {
            if (size > cap) continue; // never: larger than the ring
            // Refused for want of room: once the reader has read everything (and the skip to the
            // ring's start a refusal may leave: a record over half the ring), an empty ring takes it.
            drain();
            at = w.begin(size);
            if (at < 0 && size > cap / 2) {
              drain();
              at = w.begin(size);
            }
            assert.ok(at >= 0, `an empty ring of ${cap} refused ${size}`);
          }
          r.u32[(at >> 2) + 2] = n;
          for (let i = 12; i < 12 + bytes; i++) r.buf[at + i] = (n + i) & 0xff;
          w.end(at, size, 7);
          written.push(n);
          next++;
        }
        drain();
        assert.deepEqual(read, written);
      }),
      { numRuns: 300 },
    );
  });

  it('a ring overwritten with anything: the reader never throws, never reads past the cursor, and the writer goes on', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(), fc.nat({ max: 0xffffffff })), { maxLength: 40 }), fc.integer({ min: 1, max: 12 }), (pokes, count) => {
        const sab = allocateRing(4096);
        const writer = new HandedWriter(new RingWriter(sab));
        const ring = new RingReader(sab);
        const handed = new HandedReader(ring);
        const req = (i: number) => ({
          reqId: 'r',
          hash: `0x${i.toString(16).padStart(64, '0')}`,
          rawHex: `0x${'ab'.repeat(i % 90)}`,
          account: `a${i % 3}`,
          sender: i % 2 === 0 ? `0x${'11'.repeat(20)}` : null,
        });
        for (let i = 0; i < count; i++) writer.write(1, req(i), 'seq', 'hash', Date.now(), 1);
        // Anything at all in the records' bytes (the header's cursors left alone).
        const words = new Uint32Array(sab, HEADER);
        for (const [i, v] of pokes) words[i % words.length] = v;
        const cursor = Atomics.load(ring.i32, 0);
        ring.drain((at, size, kind) => {
          assert.ok(at >= HEADER && at + size <= sab.byteLength, `a record within the ring: ${at}+${size}`);
          if (handed.takeName(at, size, kind) || kind !== ACCEPTED) return;
          handed.chainOf(at);
          const e = requestAt(handed, at, size);
          if (e !== null) handed.bounds(at);
        });
        assert.equal(Atomics.load(ring.i32, 1), cursor, 'read up to the cursor, not past it');
        // The writer goes on, and what it writes next is read whole (its names as their records
        // said: a name record overwritten with other characters is not something a reader can tell).
        assert.ok(writer.write(1, req(500), 'seq', 'hash', Date.now(), 1));
        let e: ReturnType<typeof requestAt> = null;
        ring.drain((at, size, kind) => {
          if (!handed.takeName(at, size, kind) && kind === ACCEPTED) e = requestAt(handed, at, size);
        });
        assert.equal((e as ReturnType<typeof requestAt>)?.hash, req(500).hash);
        assert.equal(typeof (e as ReturnType<typeof requestAt>)?.account, 'string');
      }),
      { numRuns: 300 },
    );
  });
});
