/**
 * bench:limit's arithmetic (bench/limit/report.ts) and the CI guard's tolerances
 * (bench/guard/verdict.ts): a part is paired with the transport's round beside it, the sum and
 * ratios follow from the parts, what remains is named by txgate's own parts on the scenario's
 * path; a tolerance follows from the noise it was measured from.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toleranceOf } from '../../bench/guard/verdict.js';
import type { LimitScenario } from '../../bench/limit/parts.js';
import { limitRow, limitTables } from '../../bench/limit/report.js';
import { noisyLine, renderLimit } from '../../scripts/limit-table.js';
import { readRun } from '../../bench/common/results-schema.js';

/** txgate's parts on the 401's own path (bench:profile's attribution), in the request's order. */
const STAGES = new Map([
  ['host', 1000],
  ['size_cap', 600],
  ['parse', 9000],
  ['route', 500],
  ['auth', 12000],
  ['answer', 5000],
  ['outside', 23000],
]);

describe('bench:limit: a scenario against the sum of its parts', () => {
  const l: LimitScenario = { name: '401 unauthorized', parts: ['envelope', 'lookup', 'audit'] };
  const row = limitRow({
    l,
    txgate: [60_000, 62_000, 61_000],
    echo: [20_000, 20_000, 20_000],
    parts: new Map([
      ['transport', [21_000, 22_000, 21_500]],
      // each round paired with the transport's beside it: 8k, 8k, 8.5k over it
      ['envelope', [29_000, 30_000, 30_000]],
      ['lookup', [30_000, 31_000, 30_500]],
      ['audit', [25_000, 26_000, 25_500]],
    ]),
    stages: STAGES,
  });
  it('each part is the median of its rounds less the transport round beside it; the sum, txgate / sum and / echo follow', () => {
    assert.deepEqual(
      row.parts.map((p) => [p.part, p.cost]),
      [
        ['transport', 21_500],
        ['envelope', 8_000],
        ['lookup', 9_000],
        ['audit', 4_000],
      ],
    );
    assert.equal(row.sum, 42_500);
    assert.equal(row.txgate, 61_000);
    assert.equal(row.ratio, 61_000 / 42_500);
    assert.equal(row.echoRatio, 61_000 / 20_000);
  });
  it("what remains is named by what txgate's own parts do, each group less the irreducible parts it does", () => {
    assert.deepEqual(
      row.remains.map((r) => [r.stage, r.rest]),
      [
        ['reading (host to decode)', 1000 + 600 + 9000 + 500 - 8000],
        ['the account (auth, grant)', 12_000 - 9000],
        ['the forward and the wire (forward, outside)', 23_000 - 21_500],
        ['the answer (its hook, the log lines)', 5000 - 4000],
      ],
    );
  });
  it('a row counted over another scenario names the difference; a stage no part does remains whole; the table prints a row and its remains', () => {
    const tracked = limitRow({
      l: { name: 'tracked', parts: ['forward'], stub: { offset: 2 }, over: 'valid submission' },
      txgate: [100_000],
      echo: [20_000],
      parts: new Map([
        ['transport', [20_000]],
        ['forward', [45_000]],
      ]),
      stages: new Map([
        ['forward', 30_000],
        ['outside', 20_000],
        ['rate_limit', 2_000],
      ]),
      overMedian: 95_000,
    });
    const by = new Map(tracked.remains.map((r) => [r.stage, r]));
    assert.deepEqual(by.get('the forward and the wire (forward, outside)'), {
      stage: 'the forward and the wire (forward, outside)',
      cost: 50_000,
      parts: 45_000,
      rest: 5_000,
    });
    assert.deepEqual(by.get('rate_limit'), { stage: 'rate_limit', cost: 2_000, parts: 0, rest: 2_000 });
    assert.deepEqual(tracked.remains.at(-1), { stage: 'over "valid submission"', cost: 5_000, parts: 0, rest: 5_000 });
    const t = limitTables([row, tracked]).join('\n');
    assert.match(t, /\| 401 unauthorized \| 21\.5k \| 8\.0k \| 9\.0k \| — \| — \| 4\.0k \| 42\.5k \| 61\.0k \| 1\.44x \| 3\.05x \|/);
    assert.match(
      t,
      /What remains of tracked \(55\.0k\), by part of txgate's request.*, the forward and the wire \(forward, outside\) \+5\.0k, the answer \(its hook, the log lines\) \+0\.0k, rate_limit \+2\.0k, over "valid submission" \+5\.0k$/m,
    );
  });
  it("the decode part's native floor is shown beside it and not added to the sum; each group of what remains is one signed figure", () => {
    const row = limitRow({
      l: { name: 'valid', parts: ['decode', 'floor'] },
      txgate: [90_000],
      echo: [20_000],
      parts: new Map([
        ['transport', [20_000]],
        ['decode', [80_000]],
        ['floor', [70_000]],
      ]),
      stages: new Map([
        ['decode', 58_000],
        ['outside', 22_000],
        ['fee', 2_000],
      ]),
    });
    assert.equal(row.sum, 80_000, 'the transport and decode: the floor is inside decode');
    const t = limitTables([row]).join('\n');
    assert.match(t, /\| valid \| 20\.0k \| — \| — \| 60\.0k \(native 50\.0k\) \| — \| — \| 80\.0k \| 90\.0k \|/);
    // Each group once, signed: reading 58k − 60k, the wire 22k − 20k; a stage no part does whole.
    assert.match(
      t,
      /: reading \(host to decode\) −2\.0k, the account \(auth, grant\) \+0\.0k, the forward and the wire \(forward, outside\) \+2\.0k, the answer \(its hook, the log lines\) \+0\.0k, fee \+2\.0k$/m,
    );
    // A run recorded with a group's parts and its count as two entries of one name reads as one figure.
    const split = {
      ...row,
      remains: [...row.remains.map((r) => ({ ...r, rest: -r.parts, cost: 0 })), ...row.remains.map((r) => ({ ...r, rest: r.cost, parts: 0 }))],
    };
    assert.equal(limitTables([split]).join('\n').split('reading (host to decode)').length, 2, 'named once');
  });
});

describe("docs/performance.md's bench:limit block: noisy rounds flagged", () => {
  const result = (server: string, scenario: string, spread: number) => ({ server, scenario, median: 1000, min: 900, max: 1100, spread });
  it('every measurement whose rounds spread over maxSpread is named with its spread; none, no line', () => {
    const run = {
      maxSpread: 0.1,
      results: [result('echo', 'eth_chainId', 0.186), result('txgate', 'valid submission', 0.05), result('parts', 'x · forward', 0.614)],
    };
    assert.equal(
      noisyLine(run),
      '⚠ noisy: rounds spread over 10.0%, so the figures read from them are not steady: echo eth_chainId 18.6%, parts x · forward 61.4%.',
    );
    assert.equal(noisyLine({ maxSpread: 0.1, results: [result('txgate', 'valid submission', 0.1)] }), '');
  });
  it('the committed run: each of its noisy measurements is flagged in the rendered block, and none when none is', () => {
    const text = renderLimit();
    const run = readRun('limit', 'limit');
    const noisy = run.results.filter((r) => r.spread > run.maxSpread);
    for (const r of noisy) assert.ok(text.includes(`${r.server} ${r.scenario} ${(r.spread * 100).toFixed(1)}%`), `${r.server} ${r.scenario} flagged`);
    assert.equal(text.includes('⚠ noisy'), noisy.length > 0);
  });
});

describe('the CI guard: a tolerance from the noise (the verdict: test/unit/bench-figures.test.ts)', () => {
  it('the tolerance is one and a half times the worst excursion seen, at least 1%', () => {
    assert.equal(toleranceOf([1.004, 0.991, 1.012]).tolerance, 0.018);
    assert.equal(toleranceOf([1.004, 0.97, 1.012]).tolerance, 0.045);
    assert.equal(toleranceOf([1.001, 0.999]).tolerance, 0.01);
    assert.equal(toleranceOf([1.004, 0.991, 1.012]).noise.worst.toFixed(3), '0.012');
  });
});
