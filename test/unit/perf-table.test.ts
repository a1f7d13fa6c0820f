/**
 * The README's Performance table is rendered from the committed bench runs (bench/results/*.json,
 * scripts/readme-perf.ts): the README shows exactly that rendering, each figure is one the JSON
 * holds (a changed run changes the table), each run's command is rendered from the settings it
 * recorded, and a run whose shape changed is an error naming the file, never a silent gap.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { command, PERF_RUNS, readRun, renderPerf, type ReadRun } from '../../scripts/readme-perf.js';
import { block } from '../../scripts/readme-tables.js';
import { renderTrackCost } from '../../scripts/track-cost.js';

const README = readFileSync(join(import.meta.dirname, '../../../README.md'), 'utf8');

/** The committed runs, with `change` applied to a deep copy of one of them. */
function runsWith(run: string, change: (doc: any) => void): ReadRun {
  return (name) => {
    const doc = structuredClone(readRun(name));
    if (name === run) change(doc);
    return doc;
  };
}

const k = (n: number) => `${(n / 1000).toFixed(1)}k`;

describe("the README's Performance table", () => {
  it('is the one rendered from bench/results (npm run readme)', () => {
    assert.equal(block(README, 'perf'), renderPerf(), 'README.md is out of date with bench/results: run npm run readme');
  });

  it("shows every profiled scenario's total on this tree, its multiple of the echo and its dearest stage, from the JSON", () => {
    const doc = readRun('profile') as {
      echo: number;
      compared: { scenario: string; total: { candidate: number }; parts: { part: string; candidate: number }[] }[];
    };
    const table = renderPerf();
    assert.ok(doc.compared.length >= 4, 'eth_chainId, 401, a submission over HTTP and to a ws:// sequencer');
    for (const c of doc.compared) {
      const row = table.split('\n').find((l) => l.startsWith(`| ${c.scenario}: instructions per request, median of 5 rounds |`));
      assert.ok(row !== undefined, c.scenario);
      assert.ok(row.includes(`${k(c.total.candidate)}, ${Number((c.total.candidate / doc.echo).toFixed(2))}x the echo`), row);
      const stages = c.parts.filter((p) => p.part !== 'outside' && p.part !== 'answer').sort((a, b) => b.candidate - a.candidate);
      assert.ok(row.includes(`dearest stage ${stages[0]!.part} ${k(stages[0]!.candidate)}`), row);
    }
  });

  it('changes when a run changes: a figure, a row and a command follow the JSON', () => {
    const before = renderPerf();
    const slower = renderPerf(
      runsWith('profile', (d) => {
        d.compared.find((c: any) => c.scenario === 'eth_chainId').total.candidate = 88_000;
      }),
    );
    assert.notEqual(slower, before);
    assert.match(slower, /\| eth_chainId: instructions per request, median of 5 rounds \| 88\.0k, /);
    const fewer = renderPerf(runsWith('ws', (d) => d.throughput.pop()));
    assert.equal(fewer.split('\n').length, before.split('\n').length, 'the same rows');
    assert.notEqual(fewer, before, 'one scenario fewer in the WebSocket row');
    const doc = readRun('load') as { duration: number };
    const longer = renderPerf(runsWith('load', (d) => (d.duration = doc.duration + 3)));
    assert.ok(longer.includes(`npm run bench:load -- --duration ${doc.duration + 3} `), 'the command carries the run setting');
  });

  it('renders each run its command from what the run recorded', () => {
    // A committed run of each kind with the settings changed (a command is rendered from a whole run, checked by its schema).
    const profile = readRun('profile') as { compared: { scenario: string; bytes?: object }[]; echo?: number };
    const { bytes: _bytes, ...one } = profile.compared.find((c) => c.scenario === 'eth_chainId')!;
    const { echo: _, ...noEcho } = profile;
    assert.equal(
      command('profile', { ...noEcho, requests: 2000, warmup: 3, rounds: 5, compared: [one] }),
      'npm run bench:profile -- --requests 2000 --warmup 3 --rounds 5 --scenarios "eth_chainId"',
    );
    assert.equal(
      command('profile-x', { ...profile, base: { ref: '.', commit: '.' }, workers: 2, worker: 1, rounds: 3, requests: 200, warmup: 24, compared: [one] }),
      'npm run bench:profile -- --base . --requests 200 --warmup 24 --rounds 3 --workers 2 --worker 1 --echo --label profile-x --scenarios "eth_chainId"',
    );
    const row = (flow: string) => ({ flow, minusSyncMs: 0, requestsPerTx: 1 });
    assert.equal(
      command('sync-x', {
        ...(readRun('sync-1s') as object),
        trials: 7,
        blockTimeS: 2,
        rows: [row('sync send, forward mode'), row('send, then poll the chain RPC every 300 ms')],
      }),
      'npm run bench:sync -- --trials 7 --block-time 2 --poll 300',
    );
    for (const run of PERF_RUNS) assert.match(command(run, readRun(run)), /^npm run bench:[a-z]+ -- /, run);
  });

  it('a run whose shape changed is an error naming the file and the field', () => {
    assert.throws(() => renderPerf(runsWith('ws', (d) => delete d.latency)), /bench\/results\/ws\.json: no latency/);
    assert.throws(
      () => renderPerf(runsWith('load', (d) => (d.throughput[0].ratio = 'fast'))),
      /bench\/results\/load\.json: throughput\.0\.ratio is not a number/,
    );
  });

  it('calls a figure a median only over an odd count of 3 or more rounds: two rounds show their range, never the upper one as a median', () => {
    const two = renderPerf(
      runsWith('load', (d) => {
        for (const t of d.throughput) t.ratios = [0.316, 0.985];
        for (const r of d.sync) if (r.ratios !== undefined) r.ratios = [1.318, 0.959];
      }),
    );
    const row = two.split('\n').find((l) => l.startsWith('| req/s under wrk'))!;
    assert.ok(row.includes('0.316x–0.985x over 2 rounds (no median)'), row);
    assert.doesNotMatch(row, /median of 2/, 'not called a median');
    assert.doesNotMatch(row, /0\.985x \(/, 'the upper round is not shown as the figure');
    const sync = two.split('\n').find((l) => l.startsWith('| the sync send'))!;
    assert.ok(sync.includes('0.959x–1.318x over 2 rounds (no median)'), sync);
    const three = renderPerf(runsWith('load', (d) => (d.throughput[0].ratios = [0.9, 0.5, 0.7])));
    assert.ok(three.includes('0.7x (median of 3 rounds, 0.5x–0.9x) ⚠ noisy: rounds spread 57.1%'), 'the middle of three, flagged noisy');
    const quiet = renderPerf(runsWith('load', (d) => (d.throughput[0].ratios = [0.9, 0.91, 0.92])));
    assert.ok(quiet.includes('0.91x (median of 3 rounds, 0.9x–0.92x);'), 'not flagged within 10%');
  });

  it('flags an added latency below its reference where it is shown, and a total the profiler found dearer than its base', () => {
    const below = renderPerf(
      runsWith('load', (d) => {
        const http = d.rate.rows.find((r: any) => r.path === 'http');
        http.added.p999 = -6687;
        d.latency[0].added.p99 = -12;
      }),
    );
    assert.ok(below.includes('-6687 µs ⚠ below the reference (its own noise: not a figure)'), 'the p99.9 of the fixed rate');
    assert.ok(below.includes('-12 µs ⚠ below the reference'), 'the added p99 at ~1,000 req/s');
    const dearer = renderPerf(
      runsWith('profile', (d) => {
        const t = d.compared.find((c: any) => c.scenario === 'valid submission').total;
        t.verdict = 'dearer';
        t.why = '+30.0k: every one of 5 paired rounds dearer';
      }),
    );
    assert.match(
      dearer,
      /\| valid submission: instructions per request, median of 5 rounds \| [^|]* dearer than the base \(\+30\.0k: every one of 5 paired rounds dearer\) \|/,
    );
  });

  it("the sync send is set against the plain send of its own round, and says that round's plain req/s", () => {
    const doc = readRun('load') as { sync: { scenario: string; plain?: { rps: number } }[] };
    const table = renderPerf();
    for (const r of doc.sync.filter((x) => x.scenario.startsWith('sync send')))
      assert.ok(table.includes(`each round against the plain send of the same round (${r.plain!.rps} req/s in the median round)`), r.scenario);
  });

  it('says when each run was recorded', () => {
    const table = renderPerf();
    const load = readRun('load') as { date: string };
    assert.ok(table.includes(`| [load](bench/results/load.md) | ${load.date.slice(0, 10)}, `), 'the date of the load run');
  });
});

describe("docs/tracking.md's cost block (scripts/track-cost.ts)", () => {
  it("flags each of bench:track's watcher figures whose rounds spread past 10%, the idle block's too", () => {
    const track = readRun('track') as any;
    const watcher = (t: any) =>
      renderTrackCost([], t)
        .split('\n')
        .find((l) => l.startsWith('- the watcher'))!;
    const noisy = structuredClone(track);
    noisy.byRound.msPerBlock = [0.3, 0.3, 0.3];
    noisy.byRound.msPerIdleBlock = [0.01, 0.0373, 0.05];
    assert.match(watcher(noisy), /per 1,000-transaction block \(rounds spread 0\.0%;.* an idle block [\d.]+ ms \(rounds spread 107\.2% ⚠ noisy; /);
    const steady = structuredClone(noisy);
    steady.byRound.msPerIdleBlock = [0.037, 0.0373, 0.038];
    assert.doesNotMatch(watcher(steady), /⚠/);
  });
});
