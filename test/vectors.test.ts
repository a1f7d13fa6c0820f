/**
 * The decoder on its own against the 168 transactions of the Ethereum test suite, each with its
 * fork: validity, sender and hash must match every one, on the reference path and on the lean
 * path. Then the two paths against each other on signed transactions and random mutations.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Hex } from 'viem';
import { Exit } from '../src/errors.js';
import { initCrypto } from '../src/native.js';
import { splitList, TxDecoder } from '../src/tx/decoder.js';
import { RLP } from '@ethereumjs/rlp';
import { sign1559, tipCall } from './support/txs.js';

interface Vector {
  source: string;
  txbytes: string;
  fork: string;
  valid: boolean;
  hash: string | null;
  sender: string | null;
}

const VECTORS: Vector[] = JSON.parse(readFileSync(join(import.meta.dirname, '../../../shared/vectors/ethereum-tests-transactions.json'), 'utf8'));
const ALL_TYPES = { txTypes: new Set([0, 1, 2, 4]), allowUnprotected: true };

before(() => initCrypto());

describe('Ethereum test vectors', () => {
  it('there are 168 of them', () => assert.equal(VECTORS.length, 168));

  for (const lean of [true, false]) {
    it(`every vector agrees (${lean ? 'lean 0x02 path' : 'reference path only'})`, () => {
      const decoders = new Map<string, TxDecoder>();
      const mismatches: string[] = [];
      for (const v of VECTORS) {
        const fork = v.fork.toLowerCase();
        let d = decoders.get(fork);
        if (d === undefined) decoders.set(fork, (d = new TxDecoder(1, fork, { lean })));
        const out = d.decode(Buffer.from(v.txbytes.slice(2), 'hex'), ALL_TYPES);
        const ok = !(out instanceof Exit);
        if (ok !== v.valid) mismatches.push(`${v.source}: expected ${v.valid ? 'valid' : 'invalid'}, got ${ok ? 'valid' : (out as Exit).reason}`);
        else if (ok && (out.hash !== v.hash || out.from !== v.sender!.toLowerCase())) mismatches.push(`${v.source}: hash/sender differ`);
      }
      assert.deepEqual(mismatches, []);
      if (lean) assert.ok(decoders.get('cancun')!.lean, 'the lean path was really used for Cancun 0x02');
    });
  }
});

describe('lean 0x02 path agrees with @ethereumjs/tx', () => {
  const lean = () => new TxDecoder(4663, 'prague');
  const ref = () => new TxDecoder(4663, 'prague', { lean: false });
  const policy = { txTypes: new Set([2]) };

  function same(a: ReturnType<TxDecoder['decode']>, b: ReturnType<TxDecoder['decode']>): boolean {
    if (a instanceof Exit || b instanceof Exit) return a instanceof Exit && b instanceof Exit && a.reason === b.reason;
    return a.hash === b.hash && a.from === b.from && a.nonce === b.nonce && a.value === b.value && a.to === b.to && a.gasLimit === b.gasLimit && Buffer.from(a.data).equals(Buffer.from(b.data));
  }

  it('on signed transactions of every shape (transfers, calls, creation, big values, access lists)', async () => {
    const L = lean();
    const R = ref();
    assert.ok(L.lean && !R.lean);
    const txs: Hex[] = [];
    for (let i = 0; i < 5; i++) {
      txs.push(await sign1559({ signer: i, nonce: i * 7 }));
      txs.push(await sign1559({ signer: i, data: tipCall('0xa0Ee7A142d267C1f36714E4a8F75612F20a79720', 10n ** 18n), gas: 60_000n }));
      txs.push(await sign1559({ signer: i, to: null, data: ('0x' + '60'.repeat(100 + i)) as Hex, gas: 200_000n }));
      txs.push(await sign1559({ signer: i, value: 2n ** 255n, maxFeePerGas: 2n ** 64n, maxPriorityFeePerGas: 0n }));
      txs.push(await sign1559({ signer: i, data: ('0x' + '00'.repeat(64) + 'ff'.repeat(64)) as Hex, gas: 21_000n + 64n * 4n + 64n * 16n }));
      txs.push(await sign1559({ signer: i, data: ('0x' + '00'.repeat(64) + 'ff'.repeat(64)) as Hex, gas: 21_000n + 64n * 4n + 64n * 16n - 1n }));
    }
    for (const t of txs) {
      const b = Buffer.from(t.slice(2), 'hex');
      const a = L.decode(b, policy);
      const r = R.decode(b, policy);
      assert.ok(same(a, r), `${t}: lean ${a instanceof Exit ? a.reason + a.tail : a.hash} vs ref ${r instanceof Exit ? r.reason + r.tail : r.hash}`);
    }
  });

  it('an access list encoded as a byte string (0x80 for 0xc0) is invalid on both paths', () => {
    // Found by the mutation property below: @ethereumjs/tx alone would take it (and recover some sender).
    const signed = '02f87182123780843b9aca0084b2d05e0082520894a0ee7a142d267c1f36714e4a8f75612f20a7972085e8d4a5100080c001a0e64dda9e95b006bb4202041239c5ab642851aba9b333714c1bcbbfeb3006f8b6a04ff0381a1c1c5bcfcd8f848534c385ad9ae8738e2f913adc80cf120f9bb537b4';
    const b = Buffer.from(signed, 'hex');
    const [L, R] = [lean(), ref()];
    assert.ok(!(L.decode(b, policy) instanceof Exit), 'the original is valid');
    assert.equal(b[48], 0xc0);
    b[48] = 0x80;
    for (const d of [L, R]) {
      const out = d.decode(b, policy);
      assert.ok(out instanceof Exit && out.reason === 'invalid_transaction', `${d.lean ? 'lean' : 'reference'}: ${out instanceof Exit ? out.reason : 'accepted'}`);
    }
  });

  it('on random single-byte mutations and truncations of signed transactions', async () => {
    const L = lean();
    const R = ref();
    const seeds = await Promise.all([sign1559({}), sign1559({ data: tipCall('0xa0Ee7A142d267C1f36714E4a8F75612F20a79720', 5n), gas: 60_000n })]);
    fc.assert(
      fc.property(fc.constantFrom(...seeds), fc.nat(), fc.integer({ min: 0, max: 255 }), fc.boolean(), (seed, pos, byte, truncate) => {
        const b = Buffer.from(seed.slice(2), 'hex');
        const i = 1 + (pos % (b.length - 1));
        const m = truncate ? b.subarray(0, i) : Buffer.from(b);
        if (!truncate) m[i] = byte;
        return same(L.decode(m, policy), R.decode(m, policy));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('splitList agrees with RLP.decode', () => {
  const asJson = (v: unknown): unknown => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : Array.isArray(v) ? v.map(asJson) : v);
  const reference = (b: Uint8Array): unknown => {
    try {
      const v = RLP.decode(b);
      return Array.isArray(v) ? asJson(v) : null;
    } catch {
      return null;
    }
  };
  it('on random bytes and on mutations of signed 0x02 payloads', async () => {
    const seeds = (await Promise.all([sign1559({}), sign1559({ data: tipCall('0xa0Ee7A142d267C1f36714E4a8F75612F20a79720', 5n), gas: 60_000n })])).map((t) => Buffer.from(t.slice(4), 'hex'));
    const mutated = fc.tuple(fc.constantFrom(...seeds), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }), fc.nat()).map(([seed, flips, cut]) => {
      const b = Buffer.from(seed);
      for (const [pos, v] of flips) b[pos % b.length] = v;
      return cut % 5 === 0 ? b.subarray(0, cut % b.length) : b;
    });
    fc.assert(
      fc.property(fc.oneof(mutated, fc.uint8Array({ maxLength: 80 }).map((u) => Buffer.concat([Buffer.from([0xc0 + (u.length % 56)]), u]))), (b) => {
        const mine = splitList(b);
        return JSON.stringify(mine === null ? null : asJson(mine)) === JSON.stringify(reference(b));
      }),
      { numRuns: 5000 },
    );
  });
});
