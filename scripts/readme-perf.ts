/**
 * The README's Performance table, rendered from the committed bench runs (bench/results/*.json):
 * every figure is read from a run's JSON, and the command that reproduces a run is rendered from
 * the settings that run recorded. `npm run readme` writes it between `<!-- perf:start -->` and
 * `<!-- perf:end -->`; a test fails when the README differs from the JSON. What may be called a
 * figure is bench/shared/figures.ts's rule: a median only of an odd count of rounds (3 or more), a
 * figure below its reference or from noisy rounds flagged in its cell.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flagged, hasMedian, noisyNote, roundsSpread } from '../bench/shared/figures.js';

export const RESULTS_DIR = join(import.meta.dirname, '../../bench/results');

/** A run's JSON by its name in bench/results (without `.json`). */
export type ReadRun = (name: string) => unknown;
export const readRun: ReadRun = (name) => JSON.parse(readFileSync(join(RESULTS_DIR, `${name}.json`), 'utf8'));

/** The runs the table reads, in its order. */
export const PERF_RUNS = ['instr-ws-sequencer', 'instr', 'load', 'ws', 'sync-1s', 'sync-0.25s'] as const;

/** A field of a run's JSON, or an error naming the run and the path (a run's shape changed). */
function at(run: string, doc: unknown, ...path: (string | number)[]): unknown {
  let v = doc;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || !(key in v)) throw new Error(`bench/results/${run}.json: no ${path.join('.')}`);
    v = (v as Record<string | number, unknown>)[key];
  }
  return v;
}
function num(run: string, doc: unknown, ...path: (string | number)[]): number {
  const v = at(run, doc, ...path);
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`bench/results/${run}.json: ${path.join('.')} is not a number`);
  return v;
}
function list(run: string, doc: unknown, ...path: (string | number)[]): unknown[] {
  const v = at(run, doc, ...path);
  if (!Array.isArray(v)) throw new Error(`bench/results/${run}.json: ${path.join('.')} is not a list`);
  return v;
}
function str(run: string, doc: unknown, ...path: (string | number)[]): string {
  const v = at(run, doc, ...path);
  if (typeof v !== 'string') throw new Error(`bench/results/${run}.json: ${path.join('.')} is not a string`);
  return v;
}

const kilo = (n: number) => `${(n / 1000).toFixed(1)}k`;
const x = (n: number, digits = 2) => `${Number(n.toFixed(digits))}x`;
const pct = (n: number) => `${Number((n * 100).toFixed(1))}%`;
const link = (run: string) => `[${run}](bench/results/${run}.md)`;

/** One scenario's median in a bench:instr run, by server. */
function instrMedian(run: string, doc: unknown, server: string, scenario: string): { median: number; spread: number } | undefined {
  // bench:instr takes an odd --rounds of 3 or more: its median is one.
  for (const [i, r] of list(run, doc, 'results').entries()) {
    if (str(run, doc, 'results', i, 'server') === server && str(run, doc, 'results', i, 'scenario') === scenario) {
      return { median: num(run, r, 'median'), spread: num(run, r, 'spread') };
    }
  }
  return undefined;
}

/** "median of 5 rounds", or, for a count that has no median, what the figure is instead. */
function roundsOf(run: string, doc: unknown): string {
  const n = num(run, doc, 'rounds');
  return hasMedian(n) ? `median of ${n} rounds` : `${n} rounds (no median)`;
}

/**
 * One ratio over rounds: the median of an odd count (3 or more) with the range, else only the
 * range (never called a median); flagged where the rounds spread past the noise bound.
 */
function overRounds(ratios: readonly number[], digits = 3): string {
  const lo = x(Math.min(...ratios), digits);
  const hi = x(Math.max(...ratios), digits);
  const sorted = [...ratios].sort((a, b) => a - b);
  const noise = noisyNote(roundsSpread(ratios));
  if (!hasMedian(ratios.length)) return `${lo}–${hi} over ${ratios.length} rounds (no median)${noise}`;
  return `${x(sorted[sorted.length >> 1]!, digits)} (median of ${ratios.length} rounds, ${lo}–${hi})${noise}`;
}

/** The bench:instr rows: txgate's instructions per request, as the echo's multiple and against the floor. */
function instrRows(run: string, doc: unknown): string[] {
  const echo = instrMedian(run, doc, 'echo', 'eth_chainId');
  if (echo === undefined) throw new Error(`bench/results/${run}.json: no echo result`);
  const txgate = list(run, doc, 'results')
    .map((_, i) => ({ server: str(run, doc, 'results', i, 'server'), scenario: str(run, doc, 'results', i, 'scenario') }))
    .filter((r) => r.server === 'txgate');
  const http = instrMedian(run, doc, 'txgate', 'valid submission');
  return txgate.map(({ scenario }) => {
    const t = instrMedian(run, doc, 'txgate', scenario)!;
    const floor = instrMedian(run, doc, 'floor', scenario);
    const against =
      floor !== undefined
        ? `floor / txgate ${(floor.median / t.median).toFixed(3)}`
        : scenario.includes('WebSocket sequencer') && http !== undefined
          ? `${x(t.median / http.median)} the same submission to an http:// sequencer`
          : 'no floor for it';
    const bound = num(run, doc, 'maxSpread');
    const noisy = t.spread > bound ? ` ⚠ noisy: rounds spread ${pct(t.spread)} > ${pct(bound)}` : ` (rounds spread ${pct(t.spread)})`;
    return `| ${scenario}: instructions per request, ${roundsOf(run, doc)} | ${kilo(t.median)}, ${x(t.median / echo.median)} the echo; ${against}${noisy} | ${link(run)} |`;
  });
}

/** The sender allow-list's recovery over the fee exit, from bench:instr's per-stage run. */
function senderRow(run: string, doc: unknown): string[] {
  const echo = instrMedian(run, doc, 'echo', 'eth_chainId');
  if (echo === undefined) throw new Error(`bench/results/${run}.json: no echo result`);
  const paired = (k: string) => num(run, doc, 'sender', 'paired', k);
  return [
    `| a sender-listed grant: the one signature recovery, over the fee exit | ${kilo(paired('median'))} instructions [${kilo(paired('lo'))} … ${kilo(paired('hi'))}], ${x(paired('median') / echo.median, 1)} the echo | ${link(run)} |`,
  ];
}

function loadRows(run: string, doc: unknown): string[] {
  const scenarios = list(run, doc, 'throughput').map((_, i) => {
    const ratios = list(run, doc, 'throughput', i, 'ratios').map((_, j) => num(run, doc, 'throughput', i, 'ratios', j));
    num(run, doc, 'throughput', i, 'ratio');
    return `${str(run, doc, 'throughput', i, 'scenario')} ${overRounds(ratios)}`;
  });
  const rows = [`| req/s under wrk, one thread, txgate / echo | ${scenarios.join('; ')} | ${link(run)} |`];
  for (const [i] of list(run, doc, 'latency').entries()) {
    const p = (k: string, q: string) => num(run, doc, 'latency', i, k, q);
    rows.push(
      `| latency txgate adds at ~1,000 req/s, p50 / p99 (${str(run, doc, 'latency', i, 'placement')}; one measurement) | ${flagged(p('added', 'p50'), '')} / ${flagged(p('added', 'p99'))} (client → stub alone ${p('direct', 'p50')} / ${p('direct', 'p99')} µs) | ${link(run)} |`,
    );
  }
  const sync = list(run, doc, 'sync')
    .map((_, i) => i)
    .filter((i) => str(run, doc, 'sync', i, 'scenario').startsWith('sync send'))
    .map((i) => {
      const ratios = list(run, doc, 'sync', i, 'ratios').map((_, j) => num(run, doc, 'sync', i, 'ratios', j));
      const plain = num(run, doc, 'sync', i, 'plain', 'rps');
      return `${str(run, doc, 'sync', i, 'scenario')}: req/s ${overRounds(ratios)}, each round against the plain send of the same round (${plain} req/s in the median round); CPU per request ${x(num(run, doc, 'sync', i, 'cpuRatio'))} (the median round)`;
    });
  if (sync.length > 0) rows.push(`| the sync send against the plain send | ${sync.join('; ')} | ${link(run)} |`);
  const rate = (doc as { rate?: unknown } | null)?.rate;
  if (rate !== undefined) {
    const paths = list(run, doc, 'rate', 'rows').map((_, i) => str(run, doc, 'rate', 'rows', i, 'path'));
    const d = paths.indexOf('direct');
    const at = (i: number, ...k: string[]) => num(run, doc, 'rate', 'rows', i, ...k);
    const via = paths
      .map((path, i) => ({ path, i }))
      .filter((p) => p.path !== 'direct')
      .map(
        ({ path, i }) =>
          `${path === 'ws' ? 'ws://' : path.toUpperCase()} sequencer ${flagged(at(i, 'added', 'p50'), '')} / ${flagged(at(i, 'added', 'p99'), '')} / ${flagged(at(i, 'added', 'p999'))}, GC ${at(i, 'gc', 'minor')} minor / ${at(i, 'gc', 'major')} major`,
      );
    rows.push(
      `| latency txgate adds at a fixed ${num(run, doc, 'rate', 'rate')} submissions/s, open loop, p50 / p99 / p99.9 (every round's samples together) | ${via.join('; ')} (client → stub alone ${at(d, 'p50')} / ${at(d, 'p99')} / ${at(d, 'p999')} µs: on this shared host the reference's own tail hides txgate's) | ${link(run)} |`,
    );
  }
  return rows;
}

function wsRows(run: string, doc: unknown): string[] {
  // Each ratio is of one round (WebSocket against the HTTP run beside it): the median of those.
  const ratios = (i: number, key: string) => list(run, doc, 'throughput', i, key).map((_, j) => num(run, doc, 'throughput', i, key, j));
  const cpu = list(run, doc, 'throughput').map(
    (_, i) => `${str(run, doc, 'throughput', i, 'scenario')} ${overRounds(ratios(i, 'cpuRatios'), 2)}, req/s ${overRounds(ratios(i, 'rpsRatios'), 2)}`,
  );
  const added = (path: string) => num(run, doc, 'latency', path, 'p50') - num(run, doc, 'latency', 'direct', 'p50');
  return [
    `| the WebSocket lane (one connection, ${num(run, doc, 'inFlight')} in flight) against ${num(run, doc, 'inFlight')} HTTP connections: server CPU per request, WS / HTTP | ${cpu.join('; ')} | ${link(run)} |`,
    `| p50 latency added at ${num(run, doc, 'latency', 'rate')} req/s, WebSocket / HTTP (one measurement) | ${flagged(added('viaWs'), '')} / ${flagged(added('viaHttp'))} | ${link(run)} |`,
  ];
}

function syncRows(run: string, doc: unknown): string[] {
  const rows = list(run, doc, 'rows').map((_, i) => ({
    flow: str(run, doc, 'rows', i, 'flow'),
    minus: num(run, doc, 'rows', i, 'minusSyncMs'),
    requests: num(run, doc, 'rows', i, 'requestsPerTx'),
  }));
  const polls = rows
    .filter((r) => r.flow.startsWith('send, then poll'))
    .map((r) => `every ${/every (\d+) ms/.exec(r.flow)?.[1] ?? '?'} ms +${r.minus} ms (${r.requests} requests)`);
  return [
    `| time to the receipt, ${num(run, doc, 'blockTimeS')}-s blocks: send-then-poll minus the sync send (1 request), median of the same trials | ${polls.join('; ')} | ${link(run)} |`,
  ];
}

/** The command that reproduces a run, from the settings it recorded. */
export function command(run: string, doc: unknown): string {
  if (run.startsWith('instr')) {
    const scenarios = [
      ...new Set(
        list(run, doc, 'results')
          .map((_, i) => ({ server: str(run, doc, 'results', i, 'server'), scenario: str(run, doc, 'results', i, 'scenario') }))
          .filter((r) => r.server === 'txgate')
          .map((r) => r.scenario),
      ),
    ];
    const stages = list(run, doc, 'stageCosts').length === 0 ? ' --no-stages' : '';
    return `npm run bench:instr -- --requests ${num(run, doc, 'requests')} --warmup ${num(run, doc, 'warmup')} --rounds ${num(run, doc, 'rounds')} --max-spread ${num(run, doc, 'maxSpread') * 100}${stages} --scenarios "${scenarios.join(',')}"`;
  }
  if (run === 'load') {
    const rounds = list(run, doc, 'throughput', 0, 'ratios').length;
    return `npm run bench:load -- --duration ${num(run, doc, 'duration')} --rounds ${rounds} --connections ${num(run, doc, 'connections')} --log-level ${str(run, doc, 'logLevel')}`;
  }
  if (run === 'ws')
    return `npm run bench:ws -- --seconds ${num(run, doc, 'seconds')} --rounds ${num(run, doc, 'rounds')} --in-flight ${num(run, doc, 'inFlight')} --rate ${num(run, doc, 'latency', 'rate')}`;
  if (run.startsWith('sync')) {
    const polls = list(run, doc, 'rows')
      .map((_, i) => /^send, then poll .*every (\d+) ms/.exec(str(run, doc, 'rows', i, 'flow'))?.[1])
      .filter((p): p is string => p !== undefined);
    return `npm run bench:sync -- --trials ${num(run, doc, 'trials')} --block-time ${num(run, doc, 'blockTimeS')} --poll ${polls.join(',')}`;
  }
  throw new Error(`no command for bench/results/${run}.json`);
}

/** When a run was recorded (its JSON's date, where it has one) and on how many cores. */
function recorded(run: string, doc: unknown): string {
  const d = (doc as { date?: unknown; cores?: unknown; loadAverage?: unknown } | null) ?? {};
  const date = typeof d.date === 'string' ? d.date.slice(0, 10) : 'undated';
  const load = Array.isArray(d.loadAverage) && typeof d.loadAverage[0] === 'number' ? `, load average ${d.loadAverage[0]} at its start` : '';
  return `${date}${typeof d.cores === 'number' ? `, ${d.cores} cores` : ''}, ${str(run, doc, 'node')}${load}`;
}

/** The Performance block: the figures, then the command behind each run. */
export function renderPerf(read: ReadRun = readRun): string {
  const docs = new Map(PERF_RUNS.map((run) => [run, read(run)] as const));
  const doc = (run: (typeof PERF_RUNS)[number]) => docs.get(run);
  const rows = [
    ...instrRows('instr-ws-sequencer', doc('instr-ws-sequencer')),
    ...senderRow('instr', doc('instr')),
    ...loadRows('load', doc('load')),
    ...wsRows('ws', doc('ws')),
    ...syncRows('sync-1s', doc('sync-1s')),
    ...syncRows('sync-0.25s', doc('sync-0.25s')),
  ];
  const commands = PERF_RUNS.map((run) => `| ${link(run)} | ${recorded(run, doc(run))} | \`${command(run, doc(run))}\` |`);
  return [
    '| measured | figure (ratios to a reference measured in the same run) | run |',
    '|---|---|---|',
    ...rows,
    '',
    '| run | recorded | its settings: reproduce it (add `--save` to write bench/results/) |',
    '|---|---|---|',
    ...commands,
  ].join('\n');
}
