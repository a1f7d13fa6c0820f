/**
 * The profiler's verdict on each part (bench/profile/verdict.ts), the benches' noisy rounds
 * (bench/common/figures.ts) and pictures (bench/common/svg.ts): a part is flagged only when every
 * paired round agrees beyond its bound, the noisy rounds are the ones that break the bound, and
 * the SVG draws what it is given.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { noisyRounds, spread } from '../../bench/common/figures.js';
import { compare, figure } from '../../bench/profile/verdict.js';
import type { Round } from '../../bench/profile/rounds.js';
import { escapeXml, stackedBarsSvg } from '../../bench/common/svg.js';

const rounds = fc.array(fc.double({ min: 1_000, max: 1_000_000, noNaN: true }), { minLength: 1, maxLength: 7 });

const round = (parts: Record<string, number>, total: number): Round => ({
  n: 300,
  total,
  parts: { ...parts, outside: total - Object.values(parts).reduce((a, b) => a + b, 0) },
  gc: 0,
  jit: 0,
  probes: 0,
  collections: 0,
  dirty: false,
});
/** Five paired rounds of a request: fee costs `fee` more on the candidate, every other part as on the base give or take `wobble`. */
const pairs = (fee: number, wobble: number): [Round[], Round[]] => {
  const b: Round[] = [];
  const c: Round[] = [];
  for (let r = 0; r < 5; r++) {
    const decode = 90_000 + 3_000 * (r % 3); // the rounds' own spread (which signatures they check), alike on both builds
    const w = (r % 2 === 0 ? 1 : -1) * wobble;
    b.push(round({ parse: 5_000, decode, fee: 2_000 }, 250_000 + decode));
    c.push(round({ parse: 5_000 + w, decode, fee: 2_000 + fee }, 250_000 + decode + fee + w));
  }
  return [b, c];
};

describe("the profiler's verdict (bench/profile/verdict.ts)", () => {
  it('a tree against itself, give or take a few hundred instructions a part: nothing flagged', () => {
    const c = compare('valid submission', pairs(0, 300), undefined, 0.043, undefined);
    for (const p of [...c.parts, c.total]) assert.equal(p.verdict, 'same', `${'part' in p ? p.part : 'total'}: ${p.why}`);
    assert.deepEqual(c.failed, []);
  });
  it('a stage dearer by thousands in every round: that stage alone flagged dearer, said how, and the guard fails it', () => {
    const c = compare('valid submission', pairs(4_000, 300), undefined, 0.043, undefined);
    const by = new Map(c.parts.map((p) => [p.part, p]));
    assert.equal(by.get('fee')!.verdict, 'dearer');
    assert.match(by.get('fee')!.why, /^\+4\.0k: every one of 5 paired rounds dearer, beyond this run's noise 0\.0k and the floor 2\.0k$/);
    for (const name of ['parse', 'decode', 'outside']) assert.equal(by.get(name)!.verdict, 'same', name);
    assert.equal(c.total.verdict, 'same', 'a 1.2% total is within the tolerance');
    assert.deepEqual(c.failed, ['fee']);
  });
  it('paired rounds that disagree are not a change, however large the median difference', () => {
    const [b, c] = pairs(4_000, 0);
    c[1] = round({ parse: 5_000, decode: 93_000, fee: 1_000 }, 342_000);
    const v = compare('x', [b, c], undefined, 0.043, undefined).parts.find((p) => p.part === 'fee')!;
    assert.equal(v.verdict, 'same');
    assert.match(v.why, /do not all agree \(4 of 5 dearer\)|within this run's noise/);
  });
  it('a total dearer than its tolerance fails the guard; bytes beyond theirs too', () => {
    const c = compare('valid submission', pairs(20_000, 0), [16_000, 16_800], 0.043, 0.01);
    assert.ok(c.failed.includes('total') && c.failed.includes('bytes') && c.failed.includes('fee'));
    assert.ok(c.total.ratio > 1.043);
  });
  it('whatever the rounds, a part is flagged only when every paired round agrees and the median is beyond its bound (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 50_000 }), fc.integer({ min: 0, max: 50_000 })), { minLength: 3, maxLength: 7 }), (xs) => {
        const f = figure(
          xs.map((x) => x[0]),
          xs.map((x) => x[1]),
          2_000,
        );
        const d = xs.map(([b, c]) => c - b);
        if (f.verdict === 'dearer') assert.ok(d.every((x) => x > 0) && f.delta > Math.max(f.noise, f.floor));
        if (f.verdict === 'cheaper') assert.ok(d.every((x) => x < 0) && -f.delta > Math.max(f.noise, f.floor));
      }),
    );
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
