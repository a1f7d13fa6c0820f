/**
 * The fleet edge's row check (`checkRow`), fuzzed: whatever a row of the accounts table holds
 * (random mutations of a valid document, rows built to break it: huge, deep, wide, past every
 * limit, unreadable), it never throws and names every refusal briefly. Accounts over HTTP:
 * test/e2e/accounts.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { checkRow, type FetchedRow } from '../../src/accounts/postgres/row-check.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { TIP } from '../support/harness.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

describe("the fleet edge's row check (fuzzed)", () => {
  const valid = {
    id: 'acme',
    keySha256: [keySha256('k')],
    grants: [{ chainId: DEV_CHAIN_ID, rateLimit: { perSecond: 1, burst: 1 }, tipAddresses: [TIP], minTipWei: '0' }],
  };
  const verdictIsSound = (row: FetchedRow) => {
    const v = checkRow(row); // never throws: a throw fails the property
    assert.equal(v.id, row.id);
    assert.equal(v.version, row.version);
    if (v.ok) assert.equal(v.account.id, row.id);
    else {
      assert.ok(v.problems.length > 0 && v.problems.length <= 21);
      assert.ok(v.problems.join('; ').length < 20_000, 'a refusal stays short');
    }
    return v;
  };
  /** Sets `value` at a random place in a copy of the valid document. */
  const mutate = (doc: unknown, path: (string | number)[], value: unknown): unknown => {
    if (path.length === 0 || typeof doc !== 'object' || doc === null) return value;
    const copy = (Array.isArray(doc) ? [...(doc as unknown[])] : { ...doc }) as Record<string | number, unknown>;
    const keys = Object.keys(copy);
    const k = keys.length === 0 ? String(path[0]) : keys[Number(path[0]) % keys.length]!;
    copy[k] = mutate(copy[k], path.slice(1), value);
    return copy;
  };
  const rowOf = (id: string, text: string | null, bytes?: number): FetchedRow => ({
    id,
    version: 1,
    bytes: bytes ?? (text === null ? 0 : Buffer.byteLength(text)),
    text,
  });

  it('never throws and names every refusal briefly, whatever the row holds', () => {
    const weird = fc.oneof(
      fc.jsonValue(),
      fc.string({ unit: 'binary', maxLength: 50 }),
      fc.constantFrom(
        null,
        true,
        -0,
        1e308,
        -1,
        2 ** 53,
        '__proto__',
        { __proto__: null },
        [],
        {},
        '0x' + 'G'.repeat(40),
        TIP.toLowerCase(),
        TIP.replace('a', 'A'),
      ),
      fc.array(fc.constantFrom(TIP, 'x', 0, null, {}), { maxLength: 200 }),
    );
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 5 }), weird, fc.constantFrom('acme', 'other', ''), (path, value, id) => {
        verdictIsSound(rowOf(id === '' ? 'acme' : id, JSON.stringify(mutate(valid, path, value)) ?? 'null'));
      }),
      { numRuns: 2_000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.integer(), (text, bytes) => {
        verdictIsSound(rowOf('acme', text, bytes));
      }),
      { numRuns: 1_000 },
    );
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (doc) => {
        verdictIsSound(rowOf('acme', JSON.stringify({ ...(typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? doc : { v: doc }), id: 'acme' })));
      }),
      { numRuns: 1_000 },
    );
  });

  it('rows built to break it: huge, deep, wide, past every limit, unreadable', () => {
    const big = (n: number, item: string) =>
      `{"id":"acme","keySha256":[],"grants":[{"chainId":${DEV_CHAIN_ID},"rateLimit":{"perSecond":1,"burst":1},"minTipWei":"0","tipAddresses":[${Array(n).fill(item).join(',')}]}]}`;
    const cases: [string, FetchedRow, RegExp][] = [
      ['6.5 million tip addresses (~19.5 MB)', rowOf('acme', big(6_500_000, '0')), /the document is \d+ bytes/],
      ['its size from the database alone, unread', rowOf('acme', null, 19_500_000), /the document is 19500000 bytes/],
      ['100,001 tip addresses', rowOf('acme', big(100_001, `"${TIP}"`)), /100001 entries, more than the 100000/],
      ['nested 200,000 deep', rowOf('acme', '['.repeat(200_000) + ']'.repeat(200_000)), /must be an object|could not be checked/],
      [
        'nested deep inside the document',
        rowOf('acme', `{"id":"acme","keySha256":[],"grants":[${'['.repeat(100_000)}${']'.repeat(100_000)}]}`),
        /must be an object|could not be checked|not serialisable/,
      ],
      [
        '100,000 unknown fields',
        rowOf('acme', `{"id":"acme","keySha256":[],"grants":[],${Array.from({ length: 100_000 }, (_, i) => `"f${i}":0`).join(',')}}`),
        /doc\.f19: unknown field; … and 1 more/,
      ],
      ['not JSON', rowOf('acme', '{"id":"acme",'), /could not be checked/],
      ['a document naming another account', rowOf('acme', JSON.stringify({ ...valid, id: 'other' })), /doc\.id "other" is not the row id/],
      ['an array', rowOf('acme', '[1,2,3]'), /must be an object/],
      ['a lone surrogate in a field name', rowOf('acme', '{"id":"acme","keySha256":[],"grants":[],"\\ud800":1}'), /unknown field/],
    ];
    for (const [name, row, why] of cases) {
      const v = verdictIsSound(row);
      assert.equal(v.ok, false, name);
      if (!v.ok) assert.match(v.problems.join('; '), why, name);
    }
    assert.equal(verdictIsSound(rowOf('acme', JSON.stringify(valid))).ok, true);
  });
});
