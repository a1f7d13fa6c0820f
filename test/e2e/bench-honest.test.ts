/**
 * What a bench may call a figure (bench/common/figures.ts, used by every bench and the README's table):
 * a median only of an odd count of 3 or more rounds (an even --rounds is refused, one line, exit
 * 2), noise and figures below their reference flagged where printed, a time at the timer's
 * resolution never printed as ops/s, the suite's reference named in its table, and a quick run
 * saying how it differs from the committed one.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  barNote,
  belowTimer,
  differsFrom,
  flagged,
  hasMedian,
  medianName,
  noisyNote,
  roundsProblem,
  roundsSpread,
  timerResolutionMs,
} from '../../bench/common/figures.js';
import { runSuite, table } from '../../bench/common/suite.js';
import { stackedBarsSvg } from '../../bench/common/svg.js';
import { tempDir } from '../support/temp-dir.js';

const root = join(import.meta.dirname, '..', '..', '..');

describe('medians', () => {
  it('only an odd count of 3 or more rounds has one; anything else is named for what it is', () => {
    assert.deepEqual([1, 2, 3, 4, 5].map(hasMedian), [false, false, true, false, true]);
    assert.equal(medianName(3), 'median of 3 rounds');
    assert.equal(medianName(2), 'upper middle of 2 rounds (an even count: no median)');
    assert.equal(medianName(1), 'one round (no median)');
    assert.equal(roundsProblem(5), null);
    assert.match(roundsProblem(2)!, /^--rounds wants an odd number ≥ 3/);
  });
  for (const [file, name] of [
    ['load', 'bench:load'],
    ['ws', 'bench:ws'],
    ['profile', 'bench:profile'],
    ['limit', 'bench:limit'],
    ['alloc', 'bench:alloc'],
    ['run', 'bench'],
  ] as const)
    it(`${name} --rounds 2: refused in one line, exit 2, nothing run`, () => {
      const r = spawnSync(process.execPath, [join(root, 'dist', 'bench', 'entry', `${file}.js`), '--rounds', '2'], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 2, r.stdout + r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /--rounds wants an odd number ≥ 3/);
    });
});

describe('flags where a figure is shown', () => {
  it('noise: rounds spread past 10% say so, within it nothing', () => {
    assert.equal(roundsSpread([0.316, 0.985, 0.5]), (0.985 - 0.316) / 0.5);
    assert.equal(noisyNote(roundsSpread([0.9, 0.91, 0.92])), '');
    assert.equal(noisyNote(0.752), ' ⚠ noisy: rounds spread 75.2%');
  });
  it('an added figure below its reference is flagged, never printed bare', () => {
    assert.equal(flagged(181), '181 µs');
    assert.equal(flagged(-6687), '-6687 µs ⚠ below the reference (its own noise: not a figure)');
    assert.equal(flagged(-3, ''), '-3 ⚠ below the reference (its own noise: not a figure)');
  });
});

describe('the SVG', () => {
  it('a noisy median is flagged on its bar, as in the table (a quick run with a noisy 326.9k)', () => {
    const svg = stackedBarsSvg({
      title: 't',
      unit: 'u',
      bars: [
        { label: 'txgate, valid submission', segments: [{ label: 'txgate', value: 326_900 }], note: barNote('326.9k', 0.752, 0.1) },
        { label: 'floor', segments: [{ label: 'floor', value: 290_000 }], note: barNote('290.0k', 0.05, 0.1) },
      ],
    });
    assert.ok(svg.includes('326.9k ⚠ NOISY: rounds spread 75.2%'), svg);
    assert.ok(svg.includes('>290.0k</text>'), 'within the bound: the figure alone');
  });
});

describe('the timer', () => {
  it('its resolution is measured; a time within a few ticks of it is no figure', () => {
    const tick = timerResolutionMs();
    assert.ok(tick > 0 && tick < 1, `${tick} ms`);
    assert.equal(belowTimer(0.00004, 0.00004), true, 'the 24,999,999 ops/s artifact: one tick');
    assert.equal(belowTimer(1, 0.00004), false);
  });
  it("a suite's table: the reference named, a task at the timer's resolution without ops/s, the median's rounds said", async () => {
    let sink = 0;
    const rows = await runSuite(
      't',
      {
        nothing: () => {},
        work: () => {
          for (let i = 0; i < 2000; i++) sink += Math.sqrt(i);
        },
      },
      { reference: 'work', time: 90, warmupTime: 10, rounds: 3 },
    );
    assert.ok(sink > 0);
    const nothing = rows.find((r) => r.task === 'nothing')!;
    const work = rows.find((r) => r.task === 'work')!;
    assert.equal(work.reference, true);
    assert.equal(nothing.reference, false);
    if (belowTimer(nothing.medianUs / 1000)) {
      assert.equal(nothing.opsPerSec, null);
      assert.equal(nothing.ratio, null);
    }
    const text = table(rows);
    assert.match(text, /\| work \(reference\) +\|.*\| 1 \(reference\) +\|/);
    assert.match(text, /each figure: the median of 3 rounds; timer resolution \d+ ns/);
    if (nothing.opsPerSec === null) assert.match(text, /at the timer's resolution: no figure/);
    assert.doesNotMatch(text, /\| 2\d{7} \|/, 'no ops/s figure of one timer tick');
  });
});

describe('a quick run against the committed one', () => {
  it('names each setting that differs, with the committed value; nothing when they match or none is committed', () => {
    const dir = tempDir('txgate-differs-');
    writeFileSync(join(dir, 'instr.json'), JSON.stringify({ requests: 2000, rounds: 5, warmup: 3 }));
    assert.equal(
      differsFrom(dir, 'instr.json', { requests: 400, rounds: 3, warmup: 3 }),
      'this run differs from the committed bench/results/instr.json: requests 400 (committed: 2000), rounds 3 (committed: 5); compare ratios, not absolute figures',
    );
    assert.equal(differsFrom(dir, 'instr.json', { requests: 2000, rounds: 5 }), '');
    assert.equal(differsFrom(dir, 'none.json', { requests: 1 }), '');
  });
});
