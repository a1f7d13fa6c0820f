/**
 * The figures behind bench:instr's per-stage table (bench/common/stage-costs.ts) and the benches'
 * pictures (bench/common/svg.ts): stage costs are never negative whatever the rounds measured, the
 * noisy rounds are the ones that break the bound, and the SVG draws what it is given.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isotonic, noisyRounds, pairedConfidence, spread, stageCosts } from '../../bench/common/stage-costs.js';
import { escapeXml, stackedBarsSvg } from '../../bench/common/svg.js';

const rounds = fc.array(fc.double({ min: 1_000, max: 1_000_000, noNaN: true }), { minLength: 1, maxLength: 7 });

describe('isotonic fit', () => {
  it('leaves a non-decreasing series alone and pools a violation to its mean', () => {
    assert.deepEqual(isotonic([1, 2, 2, 5]), [1, 2, 2, 5]);
    assert.deepEqual(isotonic([10, 4, 7]), [7, 7, 7]);
    assert.deepEqual(isotonic([1, 6, 2, 9]), [1, 4, 4, 9]);
  });
  it('is non-decreasing, keeps the length and the sum (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { maxLength: 30 }), (xs) => {
        const f = isotonic(xs);
        assert.equal(f.length, xs.length);
        for (let i = 1; i < f.length; i++) assert.ok(f[i]! >= f[i - 1]! - 1e-6 * Math.abs(f[i]!));
        const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
        assert.ok(Math.abs(sum(f) - sum(xs)) <= 1e-6 * (1 + sum(xs.map(Math.abs))));
      }),
    );
  });
});

describe('stage costs', () => {
  it('an exit measured below the one before it: pooled, its cost 0 and not resolved, never negative', () => {
    const costs = stageCosts({ stage: 'front end', rounds: [17_000, 17_500, 17_200] }, [
      { stage: 'host', rounds: [30_000, 31_000, 30_500] },
      { stage: 'parse', rounds: [50_000, 52_000, 49_000] },
      { stage: 'route', rounds: [22_000, 60_000, 21_000] }, // the busy-host case: the median below parse
      { stage: 'auth', rounds: [70_000, 71_000, 69_000] },
    ]);
    const by = new Map(costs.map((c) => [c.stage, c]));
    assert.equal(by.get('host')!.cost, 30_500 - 17_200);
    assert.equal(by.get('route')!.pooled, true);
    assert.equal(by.get('route')!.cost, 0);
    assert.equal(by.get('route')!.resolved, false);
    assert.deepEqual(by.get('route')!.paired, { median: -28_000, lo: -28_000, hi: 8_000 });
    assert.equal(by.get('parse')!.fitted, by.get('route')!.fitted, 'parse and route pooled');
    assert.equal(by.get('auth')!.resolved, true);
    assert.ok(costs.every((c) => c.cost >= 0));
  });
  it('whatever the rounds: every cost ≥ 0, and they add up to the last exit fitted over the front end (property)', () => {
    fc.assert(
      fc.property(rounds, fc.array(rounds, { minLength: 1, maxLength: 10 }), (base, exits) => {
        const costs = stageCosts(
          { stage: 'base', rounds: base },
          exits.map((r, i) => ({ stage: `s${i}`, rounds: r })),
        );
        for (const c of costs) {
          assert.ok(c.cost >= 0, `${c.stage}: ${c.cost}`);
          assert.ok(c.paired.lo <= c.paired.median && c.paired.median <= c.paired.hi);
          assert.equal(c.resolved, c.paired.lo > 0);
        }
        const total = costs.reduce((a, c) => a + c.cost, 0);
        const sorted = [...base].sort((a, b) => a - b);
        const baseMedian = sorted[Math.floor(sorted.length / 2)]!;
        assert.ok(Math.abs(total - (costs.at(-1)!.fitted - baseMedian)) < 1e-6 * costs.at(-1)!.fitted);
      }),
    );
  });
  it('the paired range holds the median difference with confidence 1 − 2^(1−R)', () => {
    assert.equal(pairedConfidence(3), 0.75);
    assert.equal(pairedConfidence(5), 0.9375);
  });
});

describe('noisy rounds', () => {
  it('within the bound: none; beyond it: the rounds outside the band around the median', () => {
    assert.deepEqual(noisyRounds([100, 102, 101], 0.05), []);
    assert.deepEqual(noisyRounds([100, 181, 101, 99, 131], 0.05), [1, 4]);
    assert.ok(Math.abs(spread([100, 131, 101]) - 0.31 / 1.01) < 1e-9);
  });
  it('the rounds it names, measured again at the median, bring the spread within the bound (property)', () => {
    fc.assert(
      fc.property(rounds, fc.double({ min: 0.01, max: 0.5, noNaN: true }), (rs, bound) => {
        const noisy = noisyRounds(rs, bound);
        if (spread(rs) <= bound) return assert.deepEqual(noisy, []);
        assert.ok(noisy.length > 0);
        const sorted = [...rs].sort((a, b) => a - b);
        const m = sorted[Math.floor(sorted.length / 2)]!;
        const again = rs.map((x, i) => (noisy.includes(i) ? m : x));
        assert.ok(spread(again) <= bound + 1e-9, `${rs} → ${again}`);
      }),
    );
  });
});

describe('SVG stacked bars', () => {
  const svg = stackedBarsSvg({
    title: 'instructions <per> request',
    unit: 'instructions per request',
    bars: [
      { label: 'echo', segments: [{ label: 'front end', value: 17_600 }] },
      {
        label: 'txgate & co',
        segments: [
          { label: 'front end', value: 17_600 },
          { label: 'host', value: 15_000 },
          { label: 'route', value: 0 },
          { label: 'forward', value: 86_000 },
        ],
      },
    ],
  });
  it('one rectangle per non-zero segment, one legend entry per segment name, text escaped', () => {
    assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="\d+" height="\d+"/);
    assert.ok(svg.trimEnd().endsWith('</svg>'));
    assert.equal((svg.match(/<rect x="[\d.]+" y="\d+" width="[\d.]+" height="22"/g) ?? []).length, 4);
    assert.equal((svg.match(/<rect x="\d+" y="\d+" width="12" height="12"/g) ?? []).length, 4);
    assert.ok(svg.includes('instructions &lt;per&gt; request'));
    assert.ok(svg.includes('txgate &amp; co'));
    assert.ok(svg.includes('>118.6k</text>'), 'the bar total written after it');
    assert.doesNotMatch(svg, /NaN|undefined/);
  });
  it('segments of the same name share a colour; a negative segment is refused', () => {
    const fills = [...svg.matchAll(/<rect [^>]*height="22" fill="(#[0-9a-f]+)"><title>([^:]+): front end/g)].map((m) => m[1]);
    assert.equal(fills.length, 2);
    assert.equal(fills[0], fills[1]);
    assert.throws(() => stackedBarsSvg({ title: 't', unit: 'u', bars: [{ label: 'x', segments: [{ label: 'a', value: -1 }] }] }), /≥ 0/);
    assert.equal(escapeXml(`a<b>&"c'`), 'a&lt;b&gt;&amp;&quot;c&apos;');
  });
});
