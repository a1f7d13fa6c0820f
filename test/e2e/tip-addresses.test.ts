/**
 * GET /tip-addresses?chainId=: decimal or 0x-hex of any length read exactly (BigInt); every
 * spelling of one value gets the same answer; an answer names only the chain the client asked
 * for (never a neighbour a double rounds to).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseChainIdParam } from '../../src/http/tip-addresses.js';
import { newKey } from '../support/harness.js';
import { send } from '../support/http.js';
import { keysNeverLogged, useGate } from '../support/gate-fixture.js';

keysNeverLogged();

describe('parseChainIdParam', () => {
  it('reads decimal and hex of any length exactly; nothing else', () => {
    assert.equal(parseChainIdParam('4663'), 4663n);
    assert.equal(parseChainIdParam('0x1237'), 4663n);
    assert.equal(parseChainIdParam('0x0'), 0n);
    assert.equal(parseChainIdParam('0'), 0n);
    assert.equal(parseChainIdParam('0010'), 10n);
    assert.equal(parseChainIdParam('9007199254740993'), 9007199254740993n);
    assert.equal(parseChainIdParam('0x' + 'f'.repeat(40)), 2n ** 160n - 1n);
    for (const bad of ['', '0x', '-1', '+1', '1.0', '1e3', 'abc', '0X10', ' 1', '1 ', '0xg']) assert.equal(parseChainIdParam(bad), null, JSON.stringify(bad));
  });
  it('decimal and hex spellings of one value agree (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 300n }), fc.nat(3), (v, zeros) => {
        assert.equal(parseChainIdParam('0'.repeat(zeros) + v.toString()), v);
        assert.equal(parseChainIdParam('0x' + '0'.repeat(zeros) + v.toString(16)), v);
        assert.equal(parseChainIdParam('0x' + v.toString(16).toUpperCase()), v);
      }),
    );
  });
});

describe('GET /tip-addresses?chainId=', () => {
  const key = newKey();
  const gate = useGate({ accounts: [{ id: 'acme', keys: [key] }] });
  const get = (q: string) => send({ port: gate.port, method: 'GET', path: `/tip-addresses?chainId=${q}`, headers: { 'x-api-key': key } });

  it('a granted chain by every spelling: 200', async () => {
    for (const q of ['4663', '0x1237', '0x0000001237', '0004663']) {
      const r = await get(q);
      assert.equal(r.status, 200, q);
      assert.equal(r.json.chainId, '0x1237');
    }
  });

  it('a value no chain has gets one answer whichever spelling, naming only that value', async () => {
    const values = [0n, 10n, 2n ** 53n + 1n, 2n ** 64n, 2n ** 200n + 7n];
    for (const v of values) {
      const answers = await Promise.all(
        [v.toString(), '0x' + v.toString(16), '0x00' + v.toString(16).toUpperCase(), '00' + v.toString()].map(async (q) => {
          const r = await get(q);
          return { status: r.status, body: r.json.error };
        }),
      );
      for (const a of answers) assert.deepEqual(a, answers[0], `${v}: one answer for every spelling`);
      assert.equal(answers[0]!.status, 403);
      assert.equal(answers[0]!.body.data.reason, 'chain_not_granted');
      assert.equal(answers[0]!.body.message, `This account is not granted chain 0x${v.toString(16)}`);
    }
  });

  it('a value too long to print is refused without naming another chain', async () => {
    const r = await get('0x1' + '0'.repeat(100));
    assert.equal(r.status, 403);
    assert.equal(r.json.error.message, 'This account is not granted the chain asked for');
  });

  it('not a number: 400 invalid_params', async () => {
    for (const q of ['abc', '-1', '1e3', '0x']) assert.equal((await get(q)).status, 400, q);
  });
});
