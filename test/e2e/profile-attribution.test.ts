/**
 * The profiler's attribution (docs/performance.md, "The profiler"): a known cost added to one
 * stage shows in that stage and in no other. Two twin pipelines run under callgrind with the
 * stage probes (test/support/probed-pipeline.ts); `heavy` spins a loop that its twin `light`
 * does not, and the loop alone is counted through a probe slot of its own: heavy less light is
 * the loop's count, every other stage equals its twin, and no part is below zero. Needs valgrind
 * and a C compiler (the probes): in CI (CI=true) their absence fails the test, elsewhere it is
 * skipped with the reason.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { attribute, GC, groupsFor, OUTSIDE, probeGroup } from '../../bench/profile/attribute.js';
import { parseDump } from '../../bench/profile/dump.js';
import { LOOP_SLOT } from '../support/probed-pipeline.js';
import { tempDir } from '../support/temp-dir.js';

const root = join(import.meta.dirname, '..', '..', '..');
const missing = ['valgrind', 'cc'].filter((t) => spawnSync('which', [t]).status !== 0);
const skip = missing.length > 0 && process.env.CI !== 'true' ? `${missing.join(' and ')} not installed (Debian: apt-get install -y valgrind gcc)` : false;

describe('the profiler attributes a known cost to its stage alone', { skip }, () => {
  it('heavy less light is the loop alone; every other stage equals its twin', () => {
    const dir = tempDir('txgate-probe-');
    const addon = join(dir, 'stage-probe.node');
    const built = spawnSync('bash', [join(root, 'scripts/build-probe.sh'), addon], { encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    const map = join(dir, 'slots.json');
    const K = 3_000;
    const r = spawnSync(
      'valgrind',
      [
        '--tool=callgrind',
        `--callgrind-out-file=${join(dir, 'cg.out')}`,
        process.execPath,
        // A young generation no run fills: a collection lands inside whichever stage allocated
        // when it came (the profiler counts such a round again; this one run cannot), and one
        // in the terminal stage's probe put hundreds of instructions a call on one twin only.
        '--min-semi-space-size=64',
        '--max-semi-space-size=64',
        join(root, 'dist/test/support/probed-pipeline.js'),
        '4000',
        String(K),
      ],
      { encoding: 'utf8', env: { ...process.env, TXGATE_STAGE_PROBES: addon, TXGATE_STAGE_PROBES_MAP: map }, timeout: 300_000 },
    );
    assert.equal(r.status, 0, r.stderr.slice(-2000));
    assert.match(r.stdout, /^done/);
    const names = new Map(Object.entries(JSON.parse(readFileSync(map, 'utf8')) as Record<string, string>).map(([k, v]) => [Number(k), v]));
    assert.deepEqual(
      [...names.values()],
      ['lead', 'heavy', 'tail', 'end', 'answer', 'lead_b', 'light', 'tail_b', 'end_b'],
      "slots given out in the stages' order",
    );
    const dump = parseDump(readFileSync(join(dir, readdirSync(dir).find((f) => f.startsWith('cg.out'))!), 'utf8'), groupsFor(64));
    assert.equal(dump.groups.get(GC)!.ir, 0, 'no collection in the run');
    const a = attribute(dump, 4000, names, 64);
    // The loop alone, the profiler's way: its probe's inclusive count per call, less a probe's own cost inside.
    const inner = dump.groups.get(probeGroup(63))!;
    const loop = dump.groups.get(probeGroup(LOOP_SLOT))!;
    assert.equal(loop.calls, 4000);
    const loopAlone = loop.ir / loop.calls - inner.ir / inner.calls;
    assert.ok(loopAlone > 5_000, `the loop costs thousands of instructions (${loopAlone.toFixed(0)})`);
    const p = a.parts;
    for (const [name, v] of Object.entries(p)) if (name !== OUTSIDE) assert.ok(v >= 0, `${name} is not below zero (${v})`);
    const added = p.heavy! - p.light!;
    assert.ok(Math.abs(added - loopAlone) < 0.03 * loopAlone + 100, `heavy − light ${added.toFixed(0)} is the loop alone ${loopAlone.toFixed(0)}`);
    for (const [x, y] of [
      ['lead', 'lead_b'],
      ['tail', 'tail_b'],
      ['end', 'end_b'],
    ] as const)
      assert.ok(Math.abs(p[x]! - p[y]!) < 100, `${x} ${p[x]!.toFixed(0)} is its twin ${y} ${p[y]!.toFixed(0)}: nothing of the loop in it`);
    // The parts and what lies outside them are the total, by what was counted.
    const sum = Object.values(p).reduce((s, v) => s + v, 0);
    assert.ok(Math.abs(sum - a.total) < 1e-6 * a.total);
  });
});
