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
import { command, PERF_RUNS, readRun, renderPerf, type ReadRun } from '../scripts/readme-perf.js';
import { block } from '../scripts/readme-tables.js';

const README = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');

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

  it("shows every bench:instr scenario's txgate median and its multiple of the echo, from the JSON", () => {
    const doc = readRun('instr-ws-sequencer') as { results: { server: string; scenario: string; median: number }[] };
    const table = renderPerf();
    const echo = doc.results.find((r) => r.server === 'echo')!.median;
    const txgate = doc.results.filter((r) => r.server === 'txgate');
    assert.ok(txgate.length >= 4, 'eth_chainId, 401, a submission over HTTP and to a ws:// sequencer');
    for (const r of txgate) {
      const row = table.split('\n').find((l) => l.startsWith(`| ${r.scenario}: instructions per request |`));
      assert.ok(row !== undefined, r.scenario);
      assert.ok(row.includes(`${k(r.median)}, ${Number((r.median / echo).toFixed(2))}x the echo`), row);
    }
  });

  it('changes when a run changes: a figure, a row and a command follow the JSON', () => {
    const before = renderPerf();
    const slower = renderPerf(
      runsWith('instr-ws-sequencer', (d) => {
        d.results.find((r: any) => r.server === 'txgate' && r.scenario === 'eth_chainId').median = 88_000;
      }),
    );
    assert.notEqual(slower, before);
    assert.match(slower, /\| eth_chainId: instructions per request \| 88\.0k, /);
    const fewer = renderPerf(runsWith('ws', (d) => d.throughput.pop()));
    assert.equal(fewer.split('\n').length, before.split('\n').length, 'the same rows');
    assert.notEqual(fewer, before, 'one scenario fewer in the WebSocket row');
    const doc = readRun('load') as { duration: number };
    const longer = renderPerf(runsWith('load', (d) => (d.duration = doc.duration + 3)));
    assert.ok(longer.includes(`npm run bench:load -- --duration ${doc.duration + 3} `), 'the command carries the run setting');
  });

  it('renders each run its command from what the run recorded', () => {
    assert.equal(
      command('instr', { requests: 2000, warmup: 3, rounds: 5, maxSpread: 0.05, stageCosts: [], results: [{ server: 'txgate', scenario: 'eth_chainId' }] }),
      'npm run bench:instr -- --requests 2000 --warmup 3 --rounds 5 --max-spread 5 --no-stages --scenarios "eth_chainId"',
    );
    assert.equal(
      command('sync-x', { trials: 7, blockTimeS: 2, rows: [{ flow: 'sync send, forward mode' }, { flow: 'send, then poll the chain RPC every 300 ms' }] }),
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
});
