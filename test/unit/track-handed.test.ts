/**
 * An acceptance handed over by another worker thread (src/track/seam/handed.ts's records in the
 * shared ring of src/track/seam/ring.ts, read by the owner of src/track/seam/owner.ts): written on
 * the accepting thread, read back into the request and the owner's entry with every field as the request and the
 * forward told it (times within the run's clock, a conditional send's bounds as bigints, past
 * 2^53 too); names sent once; a ring that wraps many times read in order; a full ring refusing
 * a record whole (the seam keeps it waiting, in order, and hands it over once there is room);
 * a record that does not read as one skipped, never tracked, and the names sent again; the owner
 * reading when a status or a pass needs the records, and at once while a lane subscription listens.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import { parseConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/log.js';
import type { ForwardRequest } from '../../src/forward/parts.js';
import { ACCEPTED, HandedReader, HandedWriter } from '../../src/track/seam/handed.js';
import { handedTaker, TrackOwner } from '../../src/track/seam/owner.js';
import { seamParts } from '../../src/track/seam/protocol.js';
import { TrackRemote } from '../../src/track/seam/remote.js';
import { allocateRing, HEADER, RingReader, RingWriter } from '../../src/track/seam/ring.js';
import { type HandOff, Tracker } from '../../src/track/tracker.js';
import { ChainRpc } from '../../src/upstreams/chain-rpc/chain-rpc.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const RPC = 'http://127.0.0.1:9';
const chain = parseConfig({ chains: [{ chainId: DEV_CHAIN_ID, hosts: ['x'], sequencers: [RPC], rpc: RPC, track: { enabled: true, pollMs: 60_000 } }] }, '.', {})
  .chains[0]!;
const rpc = new ChainRpc(RPC);
const log = createLogger({ level: 'silent' });
const tracker = new Tracker(chain, log, { rpc });
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
  reqId: 'r',
  t0: performance.now() - 40,
  ...extra,
});

/** A ring of `bytes` with both ends on this thread; `read()` takes what was written into the tracker (as the owner does). */
function ring(bytes: number) {
  const sab = allocateRing(bytes);
  const writer = new HandedWriter(new RingWriter(sab));
  const reader = new RingReader(sab);
  const handed = new HandedReader(reader);
  const kinds: number[] = [];
  const take = handedTaker(handed, (chainId) => (chainId === chain.chainId ? tracker : undefined), log);
  const read = () =>
    reader.drain((at, size, kind) => {
      kinds.push(kind);
      take(at, size, kind);
    });
  return { sab, writer, reader, handed, kinds, take, read };
}

/** The request an acceptance record reads back into, or null where it does not read as one. */
function requestAt(handed: HandedReader, at: number, size: number): ForwardRequest | null {
  let got: ForwardRequest | null = null;
  handed.take(at, size, { acceptedElsewhere: (req) => (got = req) });
  return got;
}

/** The owner of `own`'s ports and rings, with a tracker of the chain of its own (given the owner as its hand-off). */
function ownerOf(own: { ports: readonly import('node:worker_threads').MessagePort[]; rings: readonly SharedArrayBuffer[] }) {
  const owner = new TrackOwner({
    ports: own.ports,
    rings: own.rings,
    log,
    trackers: (handOff: HandOff) => new Map([[chain.chainId, new Tracker(chain, log, { rpc, handOff })]]),
  });
  return { owner, tracker: owner.trackers.get(chain.chainId)! };
}

describe('an acceptance handed over', () => {
  it('reads back as the accepting thread wrote it, names sent once', () => {
    const r = ring(1 << 16);
    const start = Date.now();
    const big = 2n ** 70n + 5n;
    for (let i = 1; i <= 4; i++)
      assert.ok(r.writer.write(chain.chainId, request(i), `https://seq-${i % 2}.example/κ`, i === 4 ? 'lookup' : 'hash', Date.now(), 40));
    assert.ok(
      r.writer.write(
        chain.chainId,
        request(5, { conditional: { blockNumberMax: 120n, timestampMax: big } }),
        'https://seq-1.example/κ',
        'resend',
        Date.now(),
        40,
      ),
    );
    assert.equal(r.read(), 0);
    // other, desk; seq-1, seq-0; hash, lookup, resend: each name once, then its number.
    assert.equal(r.kinds.filter((k) => k !== ACCEPTED).length, 7);
    assert.equal(r.kinds.filter((k) => k === ACCEPTED).length, 5);
    for (let i = 1; i <= 5; i++) {
      const q = request(i);
      const e = tracker.own(q.account, q.hash);
      assert.ok(e !== null, `acceptance ${i} tracked for its account`);
      assert.equal(tracker.own(q.account === 'desk' ? 'other' : 'desk', q.hash), null);
      assert.equal(e.state, 'pending');
      assert.equal(e.sequencer, `https://seq-${i % 2}.example/κ`);
      assert.equal(e.rule, i === 4 ? 'lookup' : i === 5 ? 'resend' : 'hash');
      assert.equal(e.sender, q.sender);
      assert.equal(e.raw, q.rawHex);
      assert.ok(e.acceptedAt >= start && e.acceptedAt <= Date.now(), `accepted at ${e.acceptedAt}`);
      assert.equal(e.acceptedAt - e.receivedAt, 40);
    }
  });

  it("a conditional send's bounds arrive as bigints, past 2^53 too", () => {
    const r = ring(1 << 12);
    const big = 2n ** 200n + 7n;
    r.writer.write(chain.chainId, request(6, { conditional: { blockNumberMax: null, timestampMax: big } }), RPC, 'hash', Date.now(), 0);
    let bounds: unknown = 'none read';
    r.reader.drain((at, size, kind) => {
      if (!r.handed.takeName(at, size, kind)) bounds = r.handed.bounds(at);
    });
    assert.deepEqual(bounds, { blockNumberMax: null, timestampMax: big });
  });

  it('a ring that wraps many times is read in order, whole records only', () => {
    const r = ring(1 << 12);
    const seen: string[] = [];
    const sizes = [0, 3, 50, 170, 7, 0, 201];
    for (let i = 0; i < 400; i++) {
      const q = { ...request(1000 + i), rawHex: `0x${'cd'.repeat(sizes[i % sizes.length]!)}` };
      assert.ok(r.writer.write(chain.chainId, q, RPC, 'hash', Date.now(), 0), `record ${i} fits`);
      if (i % 3 === 2)
        r.reader.drain((at, size, kind) => {
          if (r.handed.takeName(at, size, kind)) return;
          const e = requestAt(r.handed, at, size);
          seen.push(`${e?.hash}:${e?.rawHex.length}`);
        });
    }
    r.reader.drain((at, size, kind) => {
      if (r.handed.takeName(at, size, kind)) return;
      const e = requestAt(r.handed, at, size);
      seen.push(`${e?.hash}:${e?.rawHex.length}`);
    });
    assert.deepEqual(
      seen,
      Array.from({ length: 400 }, (_, i) => `${hashOf(1000 + i)}:${2 + 2 * sizes[i % sizes.length]!}`),
    );
  });

  it('a full ring refuses a record whole; the seam keeps it waiting in order and hands it over once read', async () => {
    const [own, other] = seamParts(2, () => new MessageChannel());
    assert.ok(own?.role === 'owner' && other?.role === 'remote');
    // A writer of its own fills the seam's ring: nothing the owner has read yet.
    const filler = new HandedWriter(new RingWriter(other.ring));
    let filled = 0;
    while (filler.write(99, request(5000 + filled), RPC, 'hash', Date.now(), 0)) filled++;
    assert.ok(filled > 1000, `${filled} records filled the ring`);
    const remote = new TrackRemote(other.port, other.ring, log);
    remote.hand(chain.chainId, request(7000), RPC, 'hash');
    remote.hand(chain.chainId, request(7001), RPC, 'hash');
    // The owner reads (chain 99 is not tracked here: its records are read and let go), and the two
    // waiting follow: not yet in the ring as it is made (its first read takes the filler's records alone).
    const { owner, tracker } = ownerOf(own);
    assert.equal(tracker.own('desk', hashOf(7000)), null);
    for (let i = 0; i < 200 && tracker.own('other', hashOf(7001)) === null; i++) await new Promise((res) => setTimeout(res, 5));
    assert.notEqual(tracker.own('desk', hashOf(7000)), null);
    assert.notEqual(tracker.own('other', hashOf(7001)), null);
    owner.close();
    remote.close();
    await tracker.close();
  });

  it('past 65,536 names the writer starts over (a RESET record), and the acceptance that crossed it is tracked with its names sent again', () => {
    // A table of its own: 70,000 acceptances, each naming a sequencer never named before (its
    // account named before it: the RESET comes between the account's number and the sequencer's).
    const own = new Tracker(
      parseConfig(
        { chains: [{ chainId: DEV_CHAIN_ID, hosts: ['x'], sequencers: [RPC], rpc: RPC, track: { enabled: true, pollMs: 60_000, maxTracked: 100_000 } }] },
        '.',
        {},
      ).chains[0]!,
      log,
      { rpc },
    );
    const sab = allocateRing(1 << 20);
    const writer = new HandedWriter(new RingWriter(sab));
    const reader = new RingReader(sab);
    const handed = new HandedReader(reader);
    const kinds = new Map<number, number>();
    const take = handedTaker(handed, () => own, log);
    const read = () =>
      reader.drain((at, size, kind) => {
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        take(at, size, kind);
      });
    const n = 70_000;
    const write = (i: number) => writer.write(chain.chainId, request(i, { account: 'desk', sender: null }), `https://seq-${i}.example`, 'hash', Date.now(), 0);
    for (let i = 0; i < n; i++) {
      if (write(i) !== true) {
        assert.equal(read(), 0);
        assert.equal(write(i), true);
      }
    }
    assert.equal(read(), 0);
    assert.equal(kinds.get(3), 1, 'one RESET');
    assert.equal(own.refused, 0, 'no acceptance refused for a number the reader no longer knew');
    assert.equal(own.pending, n);
    for (const i of [0, 65_533, 65_534, 65_535, 65_536, n - 1]) {
      const e = own.own('desk', hashOf(i));
      assert.notEqual(e, null, `acceptance ${i} tracked`);
      assert.equal(e!.sequencer, `https://seq-${i}.example`);
    }
    return own.close();
  });

  it('a record whose lengths do not fit its size is not tracked, and counted refused', () => {
    const r = ring(1 << 12);
    const refused = tracker.refused;
    r.writer.write(chain.chainId, request(8000), RPC, 'hash', Date.now(), 0);
    // The raw hex's length word of the last record overwritten with more than the record holds.
    let last = -1;
    r.reader.drain((at, size, kind) => {
      if (r.handed.takeName(at, size, kind)) return;
      last = at;
      r.reader.u32[(at >> 2) + 13] = 1 << 20;
      r.take(at, size, kind);
    });
    assert.ok(last > 0);
    assert.equal(tracker.own('desk', hashOf(8000)), null);
    assert.equal(tracker.refused, refused + 1);
  });

  it('a size word the writer never makes ends the reading: the rest is skipped, not read as records', () => {
    const r = ring(1 << 12);
    r.writer.write(chain.chainId, request(8100), RPC, 'hash', Date.now(), 0);
    r.writer.write(chain.chainId, request(8102), RPC, 'hash', Date.now(), 0);
    // The first record's size word (the ring's first record is a name: the sequencer's) made odd.
    r.reader.u32[HEADER >> 2] = 13;
    const written = Atomics.load(r.reader.i32, 0);
    assert.equal(r.read(), written);
    assert.equal(tracker.own('desk', hashOf(8100)), null);
    // The writer is told: the names it had sent go again with the next record, which is tracked.
    r.writer.write(chain.chainId, request(8104), RPC, 'hash', Date.now(), 0);
    assert.equal(r.read(), 0);
    assert.notEqual(tracker.own('desk', hashOf(8104)), null);
  });

  it('read when needed: a status question or a pass takes what waits; a lane subscription is told at once', async () => {
    const [own, other] = seamParts(2, () => new MessageChannel());
    assert.ok(own?.role === 'owner' && other?.role === 'remote');
    const { owner, tracker } = ownerOf(own);
    const remote = new TrackRemote(other.port, other.ring, log);
    const tick = () => new Promise((res) => setTimeout(res, 20));
    const pending = tracker.pending;
    remote.hand(chain.chainId, request(9000), RPC, 'hash');
    await tick();
    assert.equal(tracker.pending, pending, 'no one listens: the owner is not woken for it');
    assert.notEqual(tracker.own('desk', hashOf(9000)), null, 'a status question reads it first');
    assert.equal(tracker.pending, pending + 1);

    const told: string[] = [];
    const off = tracker.listen((e, status) => told.push(`${e.hash}:${JSON.parse(status).status}`));
    remote.hand(chain.chainId, request(9002), RPC, 'hash');
    for (let i = 0; i < 100 && told.length === 0; i++) await tick();
    assert.deepEqual(told, [`${hashOf(9002)}:pending`], 'a listener: the owner is woken and reads it at once');
    off();
    remote.hand(chain.chainId, request(9004), RPC, 'hash');
    await tick();
    assert.equal(tracker.pending, pending + 2, 'the last listener gone: read when needed again');
    owner.close();
    remote.close();
    await tracker.close();
  });
});
