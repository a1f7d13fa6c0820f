/**
 * The readers of the conditional submission (docs/conditional.md) fed arbitrary input: the
 * options a client sends (conditional/options.ts), the sequencer's answers to the conditional
 * call (forward/conditional-send.ts) and the chain RPC's latest block (the poll of the chain's
 * head source, upstreams/chain-rpc/chain-heads.ts). None throws; the options' cost is the
 * sequencers' count (the test sequencer's own, written from op-geth); the head check refuses only
 * with a fresh head past a bound, and a head whose number or timestamp is beyond 2^53 is never
 * kept, so it refuses nothing (docs/conditional.md#what-the-edge-checks-itself).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { passedBound } from '../../src/conditional/head.js';
import { ChainHeads, headOf } from '../../src/upstreams/chain-rpc/chain-heads.js';
import { readConditions } from '../../src/conditional/options.js';
import { Exit } from '../../src/base/errors.js';
import { readConditional } from '../../src/forward/conditional-send.js';
import type { Answer, Upstream } from '../../src/upstreams/upstream.js';
import { conditionalCost } from '../../src/dev/conditional-sequencer/rules.js';
import { createLogger } from '../../src/log/log.js';
import { Writable } from 'node:stream';
import { eventually } from '../support/harness.js';

const HASH = '0x' + 'ab'.repeat(32);
const hexOf = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => '0x' + Buffer.from(b).toString('hex'));
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Up to 64 bits, as many within 2^53 (and at its edge) as beyond it. */
const wide = fc.oneof(fc.bigInt({ min: 0n, max: SAFE + 16n }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.constantFrom(SAFE, SAFE + 1n));
const quantity = wide.map((v) => `0x${v.toString(16)}`);
/** A quantity the head keeps (0x and 1 to 14 hex digits, at most 2^53 - 1) as a number, else null: written here, not imported. */
const kept = (v: unknown) => (typeof v === 'string' && /^0x[0-9a-fA-F]{1,14}$/.test(v) && BigInt(v) <= SAFE ? Number(BigInt(v)) : null);
/** Options as a client may write them, well-formed. */
const wellFormed = fc.record(
  {
    knownAccounts: fc.dictionary(hexOf(20), fc.oneof(hexOf(32), fc.dictionary(hexOf(32), hexOf(32), { maxKeys: 6 })), { maxKeys: 6 }),
    blockNumberMin: quantity,
    blockNumberMax: quantity,
    timestampMin: quantity,
    timestampMax: quantity,
  },
  { requiredKeys: [] },
);

describe('conditional options: read, never thrown', () => {
  it('any JSON value: conditions, or a refusal with invalid_params or conditions_too_costly', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.anything(), wellFormed), fc.integer({ min: 1, max: 50 }), (v, cap) => {
        const c = readConditions(v, cap);
        if (c instanceof Exit) assert.ok(c.reason === 'invalid_params' || c.reason === 'conditions_too_costly', c.reason);
        else assert.deepEqual(JSON.parse(c.json), JSON.parse(JSON.stringify(v)));
      }),
      { numRuns: 2000 },
    );
  });

  it("well-formed options: their cost is the sequencers' (refused past the cap exactly), min above max refused", () => {
    fc.assert(
      fc.property(wellFormed, fc.integer({ min: 1, max: 60 }), (v, cap) => {
        const c = readConditions(v, cap);
        const cost = conditionalCost(v);
        const o = v as Record<string, string | undefined>;
        const impossible =
          (o.blockNumberMin !== undefined && o.blockNumberMax !== undefined && BigInt(o.blockNumberMin) > BigInt(o.blockNumberMax)) ||
          (o.timestampMin !== undefined && o.timestampMax !== undefined && BigInt(o.timestampMin) > BigInt(o.timestampMax));
        if (cost > cap) assert.equal(c instanceof Exit && c.reason, 'conditions_too_costly');
        else if (impossible) assert.equal(c instanceof Exit && c.reason, 'invalid_params');
        else assert.equal(!(c instanceof Exit) && c.cost, cost);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('the head check refuses only with a fresh head past a bound; a head beyond 2^53 is not kept and refuses nothing', () => {
  it('any head, any age, any bounds', () => {
    fc.assert(
      fc.property(wellFormed, wide, wide, fc.integer({ min: 0, max: 10_000 }), (v, number, timestamp, age) => {
        const c = readConditions(v, 1_000_000);
        if (c instanceof Exit) return;
        const now = 1_000_000;
        const read = headOf({ number: `0x${number.toString(16)}`, hash: HASH, timestamp: `0x${timestamp.toString(16)}` });
        const safe = number <= SAFE && timestamp <= SAFE;
        assert.equal(read !== null, safe);
        const dead = passedBound(c, read === null ? null : { ...read, seenAt: now - age }, 3000, now);
        const past = (c.blockNumberMax !== null && number > c.blockNumberMax) || (c.timestampMax !== null && timestamp > c.timestampMax);
        assert.equal(dead !== null, safe && age <= 3000 && past);
        if (dead !== null) assert.equal(dead.reason, 'conditions_expired');
        assert.equal(passedBound(c, null, 3000, now), null);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("peers' answers: read, never thrown", () => {
  it('the sequencer: any answer to the conditional call; -32003/-32005 only ever a question for the lookup', () => {
    const answer = fc.oneof(
      fc.record({ kind: fc.constant('result' as const), result: fc.oneof(fc.jsonValue(), fc.constant(HASH)) }),
      fc.record({
        kind: fc.constant('error' as const),
        code: fc.oneof(fc.integer(), fc.constantFrom(-32003, -32005, -32601)),
        message: fc.string(),
        data: fc.jsonValue(),
      }),
      fc.record({ kind: fc.constant('fault' as const), why: fc.string(), sent: fc.boolean() }),
    );
    fc.assert(
      fc.property(answer, (a) => {
        const r = readConditional(a as Answer, HASH);
        if (a.kind === 'error' && (a.code === -32003 || a.code === -32005)) assert.equal(r.kind, 'check');
        if (r.kind === 'accepted') assert.ok(a.kind === 'result' && a.result === HASH);
      }),
      { numRuns: 2000 },
    );
  });

  it('the chain RPC: any answer to the latest block leaves the head null or the last block it read of safe integers', async () => {
    const answers = fc.sample(
      fc.oneof(
        fc.jsonValue(),
        fc.record({
          number: fc.oneof(quantity, fc.jsonValue()),
          timestamp: fc.oneof(quantity, fc.jsonValue()),
          hash: fc.oneof(fc.constant(HASH), fc.constant(HASH.toUpperCase().replace('0X', '0x')), fc.jsonValue()),
        }),
      ),
      300,
    );
    // Each answer once, in order; then a fault (no block), which leaves the head as it was.
    let i = 0;
    const rpc = {
      call: async (): Promise<Answer> =>
        i < answers.length ? { kind: 'result', result: answers[i++] } : (i++, { kind: 'fault', why: 'no more', sent: false }),
    } as unknown as Upstream;
    const blocks = answers.flatMap((a) => {
      const b = typeof a === 'object' && a !== null ? (a as Record<string, unknown>) : {};
      const [number, timestamp] = [kept(b.number), kept(b.timestamp)];
      const hash = typeof b.hash === 'string' && /^0x[0-9a-fA-F]{64}$/.test(b.hash) ? b.hash.toLowerCase() : null;
      return number !== null && timestamp !== null && hash !== null ? [{ number, hash, timestamp }] : [];
    });
    const log = createLogger({ level: 'error', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
    const heads = new ChainHeads(null, log, rpc);
    const reader = new AbortController();
    heads.keepLatest(1, reader.signal);
    try {
      // A call past the last answer is made only once the poll that read the last answer is done.
      await eventually(() => i > answers.length, 10_000);
      const h = heads.head();
      const last = blocks.at(-1) ?? null;
      assert.deepEqual(
        h === null ? null : { number: h.number, hash: h.hash, timestamp: h.timestamp },
        last,
        `${blocks.length} blocks among ${answers.length} answers`,
      );
      assert.equal(heads.count, 0, 'a polled head is never news');
    } finally {
      reader.abort();
      heads.close();
    }
  });
});
