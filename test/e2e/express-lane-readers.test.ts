/**
 * The express lane's readers of its peers: the auction contract's ABI words (selectors and topics
 * checked with viem, answers as the contract encodes them), the round clock, hostile answers
 * fuzzed (never a throw, nothing out of range taken for a round or a controller), a chain RPC that
 * stalls, lies or answers garbage (the state stays, then goes stale), and a hostile HTTP peer.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { encodeAbiParameters, type Hex, toEventSelector, toFunctionSelector } from 'viem';
import { ANVIL_KEYS } from '../../src/dev/anvil.js';
import * as abi from '../../src/express-lane/abi.js';
import { interpret } from '../../src/upstreams/http/http-upstream.js';
import { type AuctionRpc, msUntilRoundEnd, RoundControl, roundAt } from '../../src/express-lane/control.js';
import { ControllerKey } from '../../src/express-lane/key.js';
import { readLaneUpstream } from '../../src/forward/express-send.js';
import { quantity } from '../../src/base/rpc-values.js';
import { ChainRpc } from '../../src/upstreams/chain-rpc/chain-rpc.js';
import { openUpstream } from '../../src/upstreams/registry.js';
import type { Answer } from '../../src/upstreams/upstream.js';
import { initCrypto } from '../../src/base/native.js';

const AUCTION = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
let key: ControllerKey;

before(async () => {
  await initCrypto();
  key = new ControllerKey(Buffer.from((ANVIL_KEYS[4] as string).slice(2), 'hex'));
});

describe('the contract words and their readers', () => {
  it('selectors and topics are the contract’s', () => {
    assert.equal(abi.ROUND_TIMING_INFO, toFunctionSelector('function roundTimingInfo()'));
    assert.equal(abi.RESOLVED_ROUNDS, toFunctionSelector('function resolvedRounds()'));
    assert.equal(abi.AUCTION_RESOLVED, toEventSelector('AuctionResolved(bool,uint64,address,address,uint256,uint256,uint64,uint64)'));
    assert.equal(abi.SET_EXPRESS_LANE_CONTROLLER, toEventSelector('SetExpressLaneController(uint64,address,address,address,uint64,uint64)'));
    assert.equal(abi.SET_ROUND_TIMING_INFO, toEventSelector('SetRoundTimingInfo(uint64,int64,uint64,uint64,uint64)'));
  });

  it('roundTimingInfo() and resolvedRounds() as the contract encodes them', () => {
    const t = encodeAbiParameters([{ type: 'int64' }, { type: 'uint64' }, { type: 'uint64' }, { type: 'uint64' }], [1700000000n, 60n, 15n, 15n]);
    assert.deepEqual(abi.readRoundTiming(t), { offsetSeconds: 1700000000, durationSeconds: 60, closingSeconds: 15, reserveSubmissionSeconds: 15 });
    const neg = encodeAbiParameters([{ type: 'int64' }, { type: 'uint64' }, { type: 'uint64' }, { type: 'uint64' }], [-5n, 60n, 15n, 15n]);
    assert.equal(abi.readRoundTiming(neg), undefined);
    const tooShort = encodeAbiParameters([{ type: 'int64' }, { type: 'uint64' }, { type: 'uint64' }, { type: 'uint64' }], [0n, 20n, 15n, 15n]);
    assert.equal(abi.readRoundTiming(tooShort), undefined);
    const who = '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65';
    const r = encodeAbiParameters(
      [{ type: 'address' }, { type: 'uint64' }, { type: 'address' }, { type: 'uint64' }],
      [who, 12n, '0x0000000000000000000000000000000000000000', 0n],
    );
    assert.deepEqual(abi.readResolvedRounds(r), [{ round: 12, controller: who }]);
  });

  it('the round clock (Nitro RoundNumberAt: 0 before the offset)', () => {
    const t = { offsetSeconds: 1000, durationSeconds: 60, closingSeconds: 15, reserveSubmissionSeconds: 15 };
    assert.equal(roundAt(t, 999_000), 0);
    assert.equal(roundAt(t, 1_000_000 + 59_999), 0);
    assert.equal(roundAt(t, 1_060_000), 1);
    assert.equal(msUntilRoundEnd(t, 1_060_500), 59_500);
  });

  it('hostile answers never throw and never read as something else (fuzz)', () => {
    const word = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }).map((w) => w.toString(16).padStart(64, '0'));
    const wordsArb = fc.array(word, { maxLength: 9 }).map((ws) => `0x${ws.join('')}`);
    const any = fc.oneof(
      fc.anything(),
      wordsArb,
      fc.string(),
      fc.stringMatching(/^[0-9a-fA-F]{0,300}$/).map((h: string) => `0x${h}`),
    );
    fc.assert(
      fc.property(any, (v) => {
        const t = abi.readRoundTiming(v);
        if (t !== undefined)
          assert.ok(t.durationSeconds >= 1 && t.closingSeconds + t.reserveSubmissionSeconds <= t.durationSeconds && Number.isSafeInteger(t.offsetSeconds));
        const r = abi.readResolvedRounds(v);
        if (r !== undefined) for (const x of r) assert.ok(Number.isSafeInteger(x.round) && x.round > 0 && /^0x[0-9a-f]{40}$/.test(x.controller));
        const q = quantity(v);
        if (q !== null) assert.ok(Number.isSafeInteger(q) && q >= 0);
        readLaneUpstream(interpret(200, typeof v === 'string' ? v : (JSON.stringify(v) ?? '')));
      }),
      { numRuns: 3000 },
    );
    const topic = fc.oneof(
      fc.constantFrom(abi.AUCTION_RESOLVED, abi.SET_EXPRESS_LANE_CONTROLLER, abi.SET_ROUND_TIMING_INFO),
      word.map((w) => `0x${w}`),
      fc.anything(),
    );
    const log = fc.record(
      {
        address: fc.oneof(fc.constant(AUCTION), fc.anything()),
        topics: fc.oneof(fc.array(topic, { maxLength: 5 }), fc.anything()),
        data: fc.oneof(wordsArb, fc.anything()),
        blockNumber: fc.oneof(fc.constant('0x10'), fc.anything()),
        removed: fc.anything(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(log, fc.anything()), (l) => {
        const ev = abi.readAuctionLog(l, AUCTION);
        if (ev?.kind === 'controller') assert.ok(Number.isSafeInteger(ev.round) && /^0x[0-9a-f]{40}$/.test(ev.controller));
      }),
      { numRuns: 5000 },
    );
  });

  it('a chain RPC that stalls, lies or answers garbage: polls fail, the state stays, then goes stale (not ours)', async () => {
    const timing = encodeAbiParameters([{ type: 'int64' }, { type: 'uint64' }, { type: 'uint64' }, { type: 'uint64' }], [0n, 60n, 15n, 15n]);
    const ours = encodeAbiParameters(
      [{ type: 'address' }, { type: 'uint64' }, { type: 'address' }, { type: 'uint64' }],
      [key.address as Hex, BigInt(Math.floor(Date.now() / 60_000)), key.address as Hex, 0n],
    );
    let mode: 'good' | 'garbage' | 'stall' | 'lie' = 'good';
    let wall = 0;
    const result = (v: unknown): Answer => ({ kind: 'result', result: v });
    const rpc: AuctionRpc = {
      async one(method, params) {
        if (mode === 'stall') return { kind: 'fault', why: 'timeout after 100 ms', sent: true };
        if (mode === 'garbage') return result({ what: [1, 2] });
        if (method === 'eth_blockNumber') return result(mode === 'lie' ? '0xffffffffffffffffff' : '0x10');
        if (method === 'eth_getLogs') return result([]);
        const data = (params[0] as { data: string }).data;
        return result(data === abi.ROUND_TIMING_INFO ? timing : ours);
      },
    };
    const c = await RoundControl.open({ auction: AUCTION, rpc, pollMs: 1000, timeoutMs: 100, staleMs: 1000, wallClock: () => wall });
    const round = roundAt(c.timing, Date.now());
    assert.equal(c.controllerOf(round), key.address);
    for (const m of ['garbage', 'stall', 'lie'] as const) {
      mode = m;
      await c.poll();
      assert.equal(c.controllerOf(round), key.address, `${m}: the state stays`);
    }
    assert.equal(c.failures, 3);
    assert.equal(c.fresh(), true);
    wall = 1001;
    assert.equal(c.fresh(), false);
    mode = 'good';
    await c.poll();
    assert.equal(c.fresh(), true);
    // A contract that does not answer a round clock is refused with one line.
    mode = 'garbage';
    await assert.rejects(
      RoundControl.open({ auction: AUCTION, rpc, pollMs: 1000, timeoutMs: 100, staleMs: 1000 }),
      /^LaneStartError: the auction contract 0x5fbd\S+ does not answer roundTimingInfo\(\) \([^\n]+\)$/,
    );
  });
});

describe('a hostile peer over HTTP', () => {
  it('the chain RPC client (the auction reads) and the endpoint upstream (the lane send): stalls, closes, 500, garbage: a failure in words, never a crash or a hang', async () => {
    let mode = '';
    const server = createServer((req, res) => {
      req.resume();
      if (mode === 'stall') return;
      if (mode === 'close') return void req.socket.destroy();
      if (mode === '500') return void res.writeHead(500).end('no');
      if (mode === 'huge') return void res.writeHead(200).end('x'.repeat(5 * 1024 * 1024));
      if (mode === 'garbage') return void res.writeHead(200).end('{"jsonrpc":"2.0"');
      res.writeHead(200).end('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"NOT_EXPRESS_LANE_CONTROLLER"}}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://user:secret@127.0.0.1:${(server.address() as AddressInfo).port}`;
    const c = new ChainRpc(url, 2);
    const endpoint = openUpstream(url, { calls: 2, sockets: 1 });
    try {
      for (const [m, want] of [
        ['stall', /^timeout after 300 ms$/],
        ['close', /^transport: /],
        ['500', /^HTTP 500$/],
        ['huge', /^HTTP 200 with a non-JSON body$/],
        ['garbage', /^HTTP 200 with a non-JSON body$/],
      ] as const) {
        mode = m;
        // Only the stall waits out its budget; the others answer at once (a long budget: a busy host is no timeout).
        const a = await c.one('eth_blockNumber', [], { timeoutMs: m === 'stall' ? 300 : 10_000 });
        assert.equal(a.kind, 'fault', m);
        assert.match((a as { why: string }).why, want, m);
        assert.equal(JSON.stringify(a).includes('secret'), false);
      }
      mode = 'error';
      const e = await c.one('eth_blockNumber', [], { timeoutMs: 10_000 });
      assert.deepEqual(e, { kind: 'error', code: -32000, message: 'NOT_EXPRESS_LANE_CONTROLLER', data: undefined });
      // The lane's send reads the endpoint's answer as the service does (forward/express-send.ts).
      assert.deepEqual(readLaneUpstream(await endpoint.call('timeboost_sendExpressLaneTransaction', '[{}]', { timeoutMs: 300, queueMs: 300 })), {
        kind: 'not-sequenced',
        code: 'NOT_EXPRESS_LANE_CONTROLLER',
        lostControl: true,
      });
      mode = 'garbage';
      assert.equal(readLaneUpstream(await endpoint.call('timeboost_sendExpressLaneTransaction', '[{}]', { timeoutMs: 300, queueMs: 300 })).kind, 'unknown');
    } finally {
      await Promise.all([c.close(), endpoint.close(true)]);
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
