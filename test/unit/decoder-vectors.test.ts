/**
 * The decoder on its own against the 168 transactions of the Ethereum test suite, each with its
 * fork: validity, sender and hash must match every one, on the reference path and on the lean
 * path. Then the two paths against each other on signed transactions and random mutations.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Hex } from 'viem';
import { Exit, REJECT } from '../../src/base/errors.js';
import { initCrypto, isCurvePoint, keccak256, secp256k1 } from '../../src/base/native.js';
import { splitList, TxDecoder } from '../../src/tx/decoder.js';
import { RLP } from '@ethereumjs/rlp';
import { toBigAt } from '../../src/tx/rlp.js';
import { MIN_TIP, TIP } from '../support/harness.js';
import { intBytes, SIGNERS, sign1559, tipCall } from '../support/txs.js';
import { VECTORS, vectorMismatches } from '../support/vectors.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

before(() => initCrypto());

describe('Ethereum test vectors', () => {
  it('there are 168 of them', () => assert.equal(VECTORS.length, 168));

  for (const [lean, signature] of [
    [true, 'recover'],
    [true, 'curve'],
    [false, 'recover'],
  ] as const) {
    it(`every vector agrees (${lean ? `lean 0x02 path, signature check ${signature}` : 'reference path only'})`, () => {
      const { mismatches, decoders } = vectorMismatches((fork) => new TxDecoder(1, fork, { lean, signature }));
      assert.deepEqual(mismatches, []);
      if (lean) assert.ok(decoders.get('cancun')!.lean, 'the lean path was really used for Cancun 0x02');
    });
  }
});

for (const signature of ['recover', 'curve'] as const)
  describe(`lean 0x02 path (signature check ${signature}) agrees with @ethereumjs/tx`, () => {
    const lean = () => new TxDecoder(DEV_CHAIN_ID, 'prague', { signature });
    const ref = () => new TxDecoder(DEV_CHAIN_ID, 'prague', { lean: false });
    const policy = { txTypes: new Set([2]) };

    function same(a: ReturnType<TxDecoder['decode']>, b: ReturnType<TxDecoder['decode']>): boolean {
      if (a instanceof Exit || b instanceof Exit) return a instanceof Exit && b instanceof Exit && a.reason === b.reason;
      return (
        a.hash === b.hash &&
        a.sender() === b.sender() &&
        a.nonce === b.nonce &&
        a.value === b.value &&
        a.to === b.to &&
        a.gasLimit === b.gasLimit &&
        Buffer.from(a.data).equals(Buffer.from(b.data))
      );
    }

    it('on signed transactions of every shape (transfers, calls, creation, big values, access lists)', async () => {
      const L = lean();
      const R = ref();
      assert.ok(L.lean && !R.lean && L.signature === signature);
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
      const signed =
        '02f87182123780843b9aca0084b2d05e0082520894a0ee7a142d267c1f36714e4a8f75612f20a7972085e8d4a5100080c001a0e64dda9e95b006bb4202041239c5ab642851aba9b333714c1bcbbfeb3006f8b6a04ff0381a1c1c5bcfcd8f848534c385ad9ae8738e2f913adc80cf120f9bb537b4';
      const b = Buffer.from(signed, 'hex');
      const [L, R] = [lean(), ref()];
      assert.ok(!(L.decode(b, policy) instanceof Exit), 'the original is valid');
      assert.equal(b[48], 0xc0);
      b[48] = 0x80;
      for (const d of [L, R]) {
        const out = d.decode(b, policy);
        assert.ok(
          out instanceof Exit && out.reason === 'invalid_transaction',
          `${d.lean ? 'lean' : 'reference'}: ${out instanceof Exit ? out.reason : 'accepted'}`,
        );
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

describe('the curve signature check', () => {
  const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const big = (n: bigint): Uint8Array => intBytes(n);
  const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
  const policy = { txTypes: new Set([2]) };
  const decoders = {
    recover: new TxDecoder(DEV_CHAIN_ID, 'prague', { signature: 'recover' }),
    curve: new TxDecoder(DEV_CHAIN_ID, 'prague', { signature: 'curve' }),
    reference: new TxDecoder(DEV_CHAIN_ID, 'prague', { lean: false }),
  };
  const unsigned = (): Uint8Array[] => [
    big(BigInt(DEV_CHAIN_ID)),
    big(0n),
    big(10n ** 9n),
    big(3n * 10n ** 9n),
    big(21_000n),
    Buffer.from(TIP.slice(2), 'hex'),
    big(MIN_TIP),
    new Uint8Array(),
    [] as unknown as Uint8Array,
  ];
  const signed = (v: bigint, r: bigint, s: bigint): Buffer => Buffer.concat([Buffer.from([2]), RLP.encode([...unsigned(), big(v), big(r), big(s)])]);
  const reasons = (b: Uint8Array) =>
    Object.fromEntries(Object.entries(decoders).map(([k, d]) => [k, ((o) => (o instanceof Exit ? o.reason : 'ok'))(d.decode(b, policy))]));

  it('refuses what recovery refuses: r = 0, r ≥ n, r not the x-coordinate of a curve point', async () => {
    const base = Buffer.from((await sign1559({})).slice(2), 'hex');
    const f = RLP.decode(base.subarray(1)) as Uint8Array[];
    const s = BigInt('0x' + toHex(f[11]!));
    let offCurve = 5n; // the first x ≥ 5 with no point: x³ + 7 is not a square mod p
    while (isCurvePoint(Buffer.concat([Buffer.from([2]), Buffer.from(offCurve.toString(16).padStart(64, '0'), 'hex')]))) offCurve++;
    const all = { recover: 'invalid_signature', curve: 'invalid_signature', reference: 'invalid_signature' };
    for (const r of [N, N + 1n, 2n ** 256n - 1n, offCurve]) assert.deepEqual(reasons(signed(1n, r, s)), all, `r = ${r}`);
    // r = 0 (an empty field): @ethereumjs/tx calls that unsigned; both lean checks, an invalid signature.
    assert.deepEqual(reasons(signed(1n, 0n, s)), { ...all, reference: 'unsigned_transaction' });
    assert.deepEqual(reasons(base), { recover: 'ok', curve: 'ok', reference: 'ok' });
  });

  it('the one difference: a signature built so that the recovered point is at infinity', () => {
    // R = k·G and s = e/k: then sR − eG is the point at infinity, and recovery fails. No signer
    // produces this (it needs no private key at all); with `curve` the decode passes it and the
    // sequencer refuses it, and the sender cannot be recovered.
    const e = BigInt('0x' + toHex(keccak256(Buffer.concat([Buffer.from([2]), RLP.encode(unsigned())]))));
    const k = 0x1234567890abcdefn;
    const R = secp256k1().publicKeyCreate(Buffer.from(k.toString(16).padStart(64, '0'), 'hex'), true);
    const r = BigInt('0x' + toHex(R.subarray(1)));
    assert.ok(r < N);
    const pow = (b: bigint, x: bigint): bigint => {
      let out = 1n;
      for (b %= N; x > 0n; x >>= 1n, b = (b * b) % N) if (x & 1n) out = (out * b) % N;
      return out;
    };
    let s = (e * pow(k, N - 2n)) % N;
    let v = R[0] === 3 ? 1n : 0n;
    if (s > N / 2n) [s, v] = [N - s, 1n - v]; // low s: −s with −R
    const b = signed(v, r, s);
    assert.deepEqual(reasons(b), { recover: 'invalid_signature', curve: 'ok', reference: 'invalid_signature' });
    const tx = decoders.curve.decode(b, policy);
    assert.ok(!(tx instanceof Exit));
    assert.equal(tx.sender(), REJECT.invalid_signature, 'asked for the sender, the refusal (never a throw)');
  });

  it('recovers the sender when asked, as the recover check does', async () => {
    for (let i = 0; i < 3; i++) {
      const b = Buffer.from((await sign1559({ signer: i, nonce: i })).slice(2), 'hex');
      const c = decoders.curve.decode(b, policy);
      const r = decoders.recover.decode(b, policy);
      assert.ok(!(c instanceof Exit) && !(r instanceof Exit));
      assert.equal(c.sender(), SIGNERS[i]!.address.toLowerCase());
      assert.equal(c.sender(), r.sender());
      assert.equal(c.hash, r.hash);
    }
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
    const seeds = (await Promise.all([sign1559({}), sign1559({ data: tipCall('0xa0Ee7A142d267C1f36714E4a8F75612F20a79720', 5n), gas: 60_000n })])).map((t) =>
      Buffer.from(t.slice(4), 'hex'),
    );
    const mutated = fc
      .tuple(fc.constantFrom(...seeds), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }), fc.nat())
      .map(([seed, flips, cut]) => {
        const b = Buffer.from(seed);
        for (const [pos, v] of flips) b[pos % b.length] = v;
        return cut % 5 === 0 ? b.subarray(0, cut % b.length) : b;
      });
    fc.assert(
      fc.property(
        fc.oneof(
          mutated,
          fc.uint8Array({ maxLength: 80 }).map((u) => Buffer.concat([Buffer.from([0xc0 + (u.length % 56)]), u])),
        ),
        (b) => {
          const mine = splitList(b);
          return JSON.stringify(mine === null ? null : asJson(mine)) === JSON.stringify(reference(b));
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe('toBigAt: the lean path integers', () => {
  it('any canonical integer, up to 40 bytes, at any offset: as BigInt reads its hex', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), fc.uint8Array({ maxLength: 40 }), (pad, n) => {
        const b = Buffer.concat([pad, n]);
        return toBigAt(b, pad.length, b.length) === (n.length === 0 ? 0n : BigInt('0x' + Buffer.from(n).toString('hex')));
      }),
      { numRuns: 3000 },
    );
  });
});
