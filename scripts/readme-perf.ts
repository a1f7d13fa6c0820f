/**
 * The README's Performance table, rendered from the committed bench runs (bench/results/*.json):
 * every figure is read from a run's JSON, and the command that reproduces a run is rendered from
 * the settings that run recorded. `npm run readme` writes it between `<!-- perf:start -->` and
 * `<!-- perf:end -->`; a test fails when the README differs from the JSON.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

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
  for (const [i, r] of list(run, doc, 'results').entries()) {
    if (str(run, doc, 'results', i, 'server') === server && str(run, doc, 'results', i, 'scenario') === scenario) {
      return { median: num(run, r, 'median'), spread: num(run, r, 'spread') };
    }
  }
  return undefined;
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
    return `| ${scenario}: instructions per request | ${kilo(t.median)}, ${x(t.median / echo.median)} the echo; ${against} (rounds spread ${pct(t.spread)}) | ${link(run)} |`;
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
    return `${str(run, doc, 'throughput', i, 'scenario')} ${x(num(run, doc, 'throughput', i, 'ratio'), 3)} (rounds ${x(Math.min(...ratios), 3)}–${x(Math.max(...ratios), 3)})`;
  });
  const rows = [`| req/s under wrk, one thread, txgate / echo | ${scenarios.join('; ')} | ${link(run)} |`];
  for (const [i] of list(run, doc, 'latency').entries()) {
    const p = (k: string, q: string) => num(run, doc, 'latency', i, k, q);
    rows.push(
      `| latency txgate adds at ~1,000 req/s, p50 / p99 (${str(run, doc, 'latency', i, 'placement')}) | ${p('added', 'p50')} / ${p('added', 'p99')} µs (client → stub alone ${p('direct', 'p50')} / ${p('direct', 'p99')} µs) | ${link(run)} |`,
    );
  }
  const sync = list(run, doc, 'sync')
    .map((_, i) => ({ scenario: str(run, doc, 'sync', i, 'scenario'), ratio: num(run, doc, 'sync', i, 'ratio'), cpu: num(run, doc, 'sync', i, 'cpuRatio') }))
    .filter((s) => s.scenario.startsWith('sync send'))
    .map((s) => `${s.scenario}: req/s ${x(s.ratio, 3)}, CPU per request ${x(s.cpu)}`);
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
          `${path === 'ws' ? 'ws://' : path.toUpperCase()} sequencer ${at(i, 'added', 'p50')} / ${at(i, 'added', 'p99')} / ${at(i, 'added', 'p999')} µs, GC ${at(i, 'gc', 'minor')} minor / ${at(i, 'gc', 'major')} major`,
      );
    rows.push(
      `| latency txgate adds at a fixed ${num(run, doc, 'rate', 'rate')} submissions/s, open loop, p50 / p99 / p99.9 | ${via.join('; ')} (client → stub alone ${at(d, 'p50')} / ${at(d, 'p99')} / ${at(d, 'p999')} µs: on this shared host the reference's own tail hides txgate's) | ${link(run)} |`,
    );
  }
  return rows;
}

function wsRows(run: string, doc: unknown): string[] {
  const cpu = list(run, doc, 'throughput').map(
    (_, i) =>
      `${str(run, doc, 'throughput', i, 'scenario')} ${x(num(run, doc, 'throughput', i, 'cpuRatio'))} (req/s ${x(num(run, doc, 'throughput', i, 'wsRps') / num(run, doc, 'throughput', i, 'httpRps'))})`,
  );
  const added = (path: string) => num(run, doc, 'latency', path, 'p50') - num(run, doc, 'latency', 'direct', 'p50');
  return [
    `| the WebSocket lane (one connection, ${num(run, doc, 'inFlight')} in flight) against ${num(run, doc, 'inFlight')} HTTP connections: server CPU per request, WS / HTTP | ${cpu.join('; ')} | ${link(run)} |`,
    `| p50 latency added at ${num(run, doc, 'latency', 'rate')} req/s, WebSocket / HTTP | ${added('viaWs')} / ${added('viaHttp')} µs | ${link(run)} |`,
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
  const commands = PERF_RUNS.map((run) => `| ${link(run)} | \`${command(run, doc(run))}\` |`);
  return [
    '| measured | figure (ratios to a reference measured in the same run) | run |',
    '|---|---|---|',
    ...rows,
    '',
    '| run | reproduce it (add `--save` to write bench/results/) |',
    '|---|---|',
    ...commands,
  ].join('\n');
}
