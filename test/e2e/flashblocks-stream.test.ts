/**
 * The flashblocks stream (src/flashblocks/stream.ts) against a WebSocket peer that plays the
 * builder's stream, hostile on purpose: frames written as op-rbuilder writes them (flashbots/
 * op-rbuilder `crates/op-rbuilder/src/builder/wspub.rs`, its `golden_wire` pins) in text and as
 * Brotli binary (Base's public endpoint), then everything a peer may send instead: not JSON,
 * binary garbage, a frame over the bound, a Brotli frame that inflates past it, a slice of a
 * payload never started, an index again, an index that jumps, a receipt for a hash the slice does
 * not carry, a receipt in the older tagged form, the connection lost and back, a silent stream.
 * Each is counted and read as what it is; no preconfirmation is made of anything but a slice's
 * own transactions; the process never fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import { brotliCompressSync } from 'node:zlib';
import { WebSocketServer, type WebSocket } from 'ws';
import { keccak256, type Hex } from 'viem';
import { initCrypto } from '../../src/base/native.js';
import { createLogger } from '../../src/log/log.js';
import { FlashblocksStream } from '../../src/flashblocks/stream.js';
import { FollowedFeed, type SliceRead } from '../../src/flashblocks/feed.js';
import { followFlashblocks, leadFlashblocks } from '../../src/threads/flashblocks-seam.js';
import type { ChainConfig } from '../../src/config/config.js';
import { eventually } from '../support/harness.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const TX = (n: number): string => '0x02' + n.toString(16).padStart(8, '0') + 'ab';
const HASH = (raw: string): string => keccak256(raw as Hex);
const PID = '0x0a0a0a0a0a0a0a0a';

/** A slice as op-rbuilder writes it (its pinned shape), of `txs` at `index`. */
function slice(index: number, txs: string[], o: { pid?: string; number?: number; receipts?: Record<string, unknown> } = {}): string {
  const number = o.number ?? 100;
  return JSON.stringify({
    payload_id: o.pid ?? PID,
    index,
    ...(index === 0
      ? {
          base: {
            parent_beacon_block_root: '0x' + '22'.repeat(32),
            parent_hash: '0x' + '33'.repeat(32),
            fee_recipient: '0x4200000000000000000000000000000000000011',
            prev_randao: '0x' + '44'.repeat(32),
            block_number: '0x' + number.toString(16),
            gas_limit: '0x1c9c380',
            timestamp: '0x686d6600',
            extra_data: '0x000102',
            base_fee_per_gas: '0x3b9aca00',
          },
        }
      : {}),
    diff: {
      state_root: '0x' + '55'.repeat(32),
      receipts_root: '0x' + '66'.repeat(32),
      logs_bloom: '0x' + '00'.repeat(256),
      gas_used: '0xc350',
      block_hash: '0x' + '77'.repeat(32),
      transactions: txs,
      withdrawals: [],
      withdrawals_root: '0x' + '88'.repeat(32),
    },
    metadata: {
      block_number: number,
      new_account_balances: {},
      receipts: o.receipts ?? Object.fromEntries(txs.map((t) => [HASH(t), { type: '0x2', status: '0x1', cumulativeGasUsed: '0x5208', logs: [] }])),
    },
  });
}

describe('the flashblocks stream against a hostile peer', () => {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  const peers = new Set<WebSocket>();
  wss.on('connection', (ws) => {
    peers.add(ws);
    ws.on('close', () => peers.delete(ws));
  });
  const send = (data: string | Buffer, binary = typeof data !== 'string') => {
    for (const p of peers) p.send(data, { binary });
  };
  let stream: FlashblocksStream;
  const slices: SliceRead[] = [];
  before(async () => {
    await initCrypto();
    if (wss.address() === null) await new Promise((r) => wss.once('listening', r));
    const url = `ws://127.0.0.1:${(wss.address() as { port: number }).port}`;
    stream = new FlashblocksStream(DEV_CHAIN_ID, { enabled: true, url, maxFrameBytes: 16_384, stallMs: 400 }, createLogger({ level: 'silent' }));
  });
  after(async () => {
    stream.close();
    await new Promise((r) => wss.close(r));
  });
  /** A new block's first slice read (what came before it was read too: one queue, in order). */
  let marker = 1000;
  const settle = async () => {
    const m = TX(++marker);
    send(slice(0, [m], { number: marker }));
    await eventually(() => stream.preconfirmation(HASH(m)) !== undefined, 5_000);
  };

  it('nothing opened before a subscriber; text and Brotli slices read in order, each transaction preconfirmed with its block, slice, place and receipt', async () => {
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(peers.size, 0);
    stream.subscribe((s) => slices.push(s));
    await eventually(() => peers.size === 1 && stream.connected, 5_000);
    send(slice(0, [TX(1)]));
    send(brotliCompressSync(Buffer.from(slice(1, [TX(2), TX(3)]))), true);
    send(slice(2, [TX(4)], { receipts: { [HASH(TX(4))]: { Eip1559: { status: '0x0', cumulativeGasUsed: '0xa410', logs: [] } } } }));
    await eventually(() => stream.preconfirmation(HASH(TX(4))) !== undefined, 5_000);
    assert.deepEqual(
      slices.map((s) => [s.number, s.index, s.txs.length]),
      [
        [100, 0, 1],
        [100, 1, 2],
        [100, 2, 1],
      ],
    );
    const p3 = stream.preconfirmation(HASH(TX(3)))!;
    assert.deepEqual([p3.number, p3.index, p3.position, p3.receipt?.status], [100, 1, 2, 1]);
    const p4 = stream.preconfirmation(HASH(TX(4)))!;
    assert.deepEqual([p4.index, p4.position, p4.receipt?.status, p4.receipt?.fields.type], [2, 3, 0, '0x2'], 'the older tagged receipt read');
    assert.equal(stream.counts.read, 3);
  });

  it('garbage, oversize and Brotli bombs, unknown payloads, repeated and jumping indexes, stray receipts: counted, never read as slices', async () => {
    const before = { ...stream.counts };
    send('{not json');
    send(Buffer.from([0x8b, 0x00, 0x80, 0xff, 0xff, 0x13]), true); // not Brotli of anything
    send('[1,2,3]');
    send(JSON.stringify({ payload_id: PID, index: 3, diff: { transactions: ['0xzz'] } }));
    send(JSON.stringify({ payload_id: PID, index: -1, diff: { transactions: [] } }));
    send(JSON.stringify({ payload_id: '0x1234', index: 3, diff: { transactions: [] } }));
    send(brotliCompressSync(Buffer.from(JSON.stringify({ pad: 'x'.repeat(200_000) }))), true); // inflates past 16 kB
    send(slice(5, [TX(50)], { pid: '0x0b0b0b0b0b0b0b0b' })); // a payload never started
    send(slice(2, [TX(51)])); // an index read already
    send(slice(6, [TX(52)], { receipts: { [HASH(TX(99))]: { type: '0x2', status: '0x1' } } })); // jumps 3 → 6; a receipt of a hash not carried
    // The last frame read: every one before it was (one queue, in order).
    await eventually(() => stream.preconfirmation(HASH(TX(52))) !== undefined, 5_000);
    const after = stream.counts;
    assert.equal(after.garbage - before.garbage, 6);
    assert.equal(after.too_big - before.too_big, 1);
    assert.equal(after.unknown_payload - before.unknown_payload, 1);
    assert.equal(after.out_of_order - before.out_of_order, 1);
    assert.equal(after.gap - before.gap, 1);
    assert.equal(after.stray_receipt - before.stray_receipt, 1);
    assert.equal(stream.preconfirmation(HASH(TX(50))), undefined, 'a payload never started makes no preconfirmation');
    assert.equal(stream.preconfirmation(HASH(TX(51))), undefined, 'an index read again makes none');
    assert.equal(stream.preconfirmation(HASH(TX(99))), undefined, 'a receipt alone makes none');
    const jumped = stream.preconfirmation(HASH(TX(52)))!;
    assert.deepEqual(
      [jumped.number, jumped.index, jumped.position, jumped.receipt],
      [100, 6, null, null],
      'read after a gap: its place unknown, no receipt of its own',
    );
  });

  it('a frame over the connection bound: counted, the connection opened again, slices read after it', async () => {
    const reconnects = stream.reconnects;
    send('x'.repeat(20_000));
    await eventually(() => stream.reconnects > reconnects && stream.connected && peers.size === 1, 10_000);
    assert.ok(stream.counts.too_big >= 2);
    await settle();
  });

  it('the stream lost and back: reconnected with backoff, joined mid-block by the metadata block number; a waiter told once', async () => {
    let told = 0;
    const raw = TX(7777);
    const cancel = stream.waitFor(HASH(raw), () => told++);
    for (const p of peers) p.terminate();
    await eventually(() => !stream.connected, 5_000);
    await eventually(() => stream.connected && peers.size === 1, 10_000);
    send(slice(4, [raw], { number: 2000, pid: '0x0c0c0c0c0c0c0c0c' }));
    await eventually(() => told === 1, 5_000);
    send(slice(5, [raw], { number: 2000, pid: '0x0c0c0c0c0c0c0c0c' }));
    send(slice(6, [TX(7778)], { number: 2000, pid: '0x0c0c0c0c0c0c0c0c' }));
    await eventually(() => stream.preconfirmation(HASH(TX(7778))) !== undefined, 5_000);
    assert.equal(told, 1);
    const p = stream.preconfirmation(HASH(raw))!;
    assert.deepEqual([p.number, p.index, p.position], [2000, 4, null]);
    cancel();
  });

  it('handed to another thread: a followed feed is told every slice, in order, and its waiters once (threads/flashblocks-seam.ts)', async () => {
    const { port1, port2 } = new MessageChannel();
    const followed = new FollowedFeed(DEV_CHAIN_ID, createLogger({ level: 'silent' }));
    const chain = {
      chainId: DEV_CHAIN_ID,
      flashblocks: { enabled: true },
      track: { enabled: true },
      sync: { enabled: false, mode: 'forward' },
    } as unknown as ChainConfig;
    const stopLead = leadFlashblocks(new Map([[DEV_CHAIN_ID, stream]]), [chain], [port1]);
    const stopFollow = followFlashblocks(new Map([[DEV_CHAIN_ID, followed]]), port2, createLogger({ level: 'silent' }));
    try {
      const got: [number, number][] = [];
      followed.subscribe((s) => got.push([s.number, s.index]));
      let told = 0;
      followed.waitFor(HASH(TX(8802)), () => told++);
      send(slice(0, [TX(8801)], { number: 3000, pid: '0x0d0d0d0d0d0d0d0d' }));
      send(brotliCompressSync(Buffer.from(slice(1, [TX(8802)], { number: 3000, pid: '0x0d0d0d0d0d0d0d0d' }))), true);
      send(slice(2, [TX(8802), TX(8803)], { number: 3000, pid: '0x0d0d0d0d0d0d0d0d' }));
      await eventually(() => followed.preconfirmation(HASH(TX(8803))) !== undefined, 5_000);
      assert.deepEqual(got, [
        [3000, 0],
        [3000, 1],
        [3000, 2],
      ]);
      assert.equal(told, 1);
      const p = followed.preconfirmation(HASH(TX(8802)))!;
      assert.deepEqual([p.number, p.index, p.position, p.receipt?.status], [3000, 1, 1, 1], 'the first slice that carried it');
    } finally {
      stopLead();
      stopFollow();
    }
  });

  it('silent past stallMs: stalled (the problem /ready says), opened again; a slice ends it', async () => {
    const reconnects = stream.reconnects;
    await eventually(() => stream.stalled, 5_000);
    assert.match(stream.problem ?? '', /no slice|not connected/);
    await eventually(() => stream.reconnects > reconnects && stream.connected && peers.size === 1, 10_000);
    await settle();
    assert.equal(stream.stalled, false);
    assert.equal(stream.problem, null);
  });
});
