/**
 * The README's Performance table, rendered from the committed bench runs (bench/results/*.json):
 * every figure is read from a run's JSON, and the command that reproduces a run is rendered from
 * the settings that run recorded. `npm run readme` writes it between `<!-- perf:start -->` and
 * `<!-- perf:end -->`; a test fails when the README differs from the JSON. What may be called a
 * figure is bench/common/figures.ts's rule: a median only of an odd count of rounds (3 or more), a
 * figure below its reference or from noisy rounds flagged in its cell.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flagged, hasMedian, noisyNote, roundsSpread } from '../bench/common/figures.js';
import { RESULTS_DIR } from '../bench/common/paths.js';
import { kindOf, parseRun, readRun as readChecked, type LoadRun, type ProfileRunDoc, type SyncRun, type WsRun } from '../bench/common/results-schema.js';

export { RESULTS_DIR };

/** A run's JSON by its name in bench/results (without `.json`), as parsed: checked by the schema when rendered. */
export type ReadRun = (name: string) => unknown;
export const readRun: ReadRun = (name) => JSON.parse(readFileSync(join(RESULTS_DIR, `${name}.json`), 'utf8'));

/** The runs the table reads, in its order. */
export const PERF_RUNS = ['profile', 'load', 'ws', 'sync-1s', 'sync-0.25s'] as const;

const kilo = (n: number) => `${(n / 1000).toFixed(1)}k`;
const x = (n: number, digits = 2) => `${Number(n.toFixed(digits))}x`;
const pct = (n: number) => `${Number((n * 100).toFixed(1))}%`;
/** A link to a run's Markdown, from the README (`base` '') or from a page of docs/ ('../'). */
let base = '';
const link = (run: string) => `[${run}](${base}bench/results/${run}.md)`;

/** "median of 5 rounds", or, for a count that has no median, what the figure is instead. */
const roundsOf = (n: number) => (hasMedian(n) ? `median of ${n} rounds` : `${n} rounds (no median)`);

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

/**
 * The profiler's rows (bench:profile, this tree's figures): each scenario's instructions per
 * request, as the echo's multiple, and its dearest stage on the request's own path.
 */
function profileRows(run: string, doc: ProfileRunDoc): string[] {
  if (doc.echo === undefined) throw new Error(`bench/results/${run}.json: no echo (run it with --echo)`);
  const echo = doc.echo;
  return doc.compared.map((c) => {
    const stages = c.parts.filter((p) => p.part !== 'outside' && p.part !== 'answer');
    const dearest = [...stages].sort((a, b) => b.candidate - a.candidate)[0];
    const top =
      dearest === undefined
        ? 'no stage: answered by the front end'
        : `dearest stage ${dearest.part} ${kilo(dearest.candidate)} (${pct(dearest.candidate / c.total.candidate)})`;
    const against = c.total.verdict === 'same' ? `as the base within its noise` : `${c.total.verdict} than the base (${c.total.why})`;
    return `| ${c.scenario}: instructions per request, ${roundsOf(doc.rounds)} | ${kilo(c.total.candidate)}, ${x(c.total.candidate / echo)} the echo; ${top}; ${against} | ${link(run)} |`;
  });
}

function loadRows(run: string, doc: LoadRun): string[] {
  const scenarios = doc.throughput.map((t) => `${t.scenario} ${overRounds(t.ratios)}`);
  const rows = [`| req/s under wrk, one thread, txgate / echo | ${scenarios.join('; ')} | ${link(run)} |`];
  for (const l of doc.latency)
    rows.push(
      `| latency txgate adds at ~1,000 req/s, p50 / p99 (${l.placement}; one measurement) | ${flagged(l.added.p50, '')} / ${flagged(l.added.p99)} (client → stub alone ${l.direct.p50} / ${l.direct.p99} µs) | ${link(run)} |`,
    );
  const sync = doc.sync
    .filter((s) => s.scenario.startsWith('sync send'))
    .map((s) => {
      if (s.ratios === undefined || s.plain === undefined || s.cpuRatio === undefined) throw new Error(`bench/results/${run}.json: ${s.scenario}: no ratios`);
      return `${s.scenario}: req/s ${overRounds(s.ratios)}, each round against the plain send of the same round (${s.plain.rps} req/s in the median round); CPU per request ${x(s.cpuRatio)} (the median round)`;
    });
  if (sync.length > 0) rows.push(`| the sync send against the plain send | ${sync.join('; ')} | ${link(run)} |`);
  const rate = doc.rate;
  if (rate !== undefined) {
    const direct = rate.rows.find((r) => r.path === 'direct');
    if (direct === undefined) throw new Error(`bench/results/${run}.json: no rate.rows direct`);
    const via = rate.rows
      .filter((r) => r.path !== 'direct')
      .map((r) => {
        if (r.added === undefined || r.gc === undefined) throw new Error(`bench/results/${run}.json: rate.rows ${r.path}: no added or gc`);
        return `${r.path === 'ws' ? 'ws://' : r.path.toUpperCase()} sequencer ${flagged(r.added.p50, '')} / ${flagged(r.added.p99, '')} / ${flagged(r.added.p999)}, GC ${r.gc.minor} minor / ${r.gc.major} major`;
      });
    rows.push(
      `| latency txgate adds at a fixed ${rate.rate} submissions/s, open loop, p50 / p99 / p99.9 (every round's samples together) | ${via.join('; ')} (client → stub alone ${direct.p50} / ${direct.p99} / ${direct.p999} µs: on this shared host the reference's own tail hides txgate's) | ${link(run)} |`,
    );
  }
  return rows;
}

function wsRows(run: string, doc: WsRun): string[] {
  // Each ratio is of one round (WebSocket against the HTTP run beside it): the median of those.
  const cpu = doc.throughput.map((t) => `${t.scenario} ${overRounds(t.cpuRatios, 2)}, req/s ${overRounds(t.rpsRatios, 2)}`);
  const added = (path: 'viaWs' | 'viaHttp') => doc.latency[path].p50 - doc.latency.direct.p50;
  return [
    `| the WebSocket transport (one connection, ${doc.inFlight} in flight) against ${doc.inFlight} HTTP connections: server CPU per request, WS / HTTP | ${cpu.join('; ')} | ${link(run)} |`,
    `| p50 latency added at ${doc.latency.rate} req/s, WebSocket / HTTP (one measurement) | ${flagged(added('viaWs'), '')} / ${flagged(added('viaHttp'))} | ${link(run)} |`,
  ];
}

function syncRows(run: string, doc: SyncRun): string[] {
  const polls = doc.rows
    .filter((r) => r.flow.startsWith('send, then poll'))
    .map((r) => `every ${/every (\d+) ms/.exec(r.flow)?.[1] ?? '?'} ms +${r.minusSyncMs} ms (${r.requestsPerTx} requests)`);
  return [
    `| time to the receipt, ${doc.blockTimeS}-s blocks: send-then-poll minus the sync send (1 request), median of the same trials | ${polls.join('; ')} | ${link(run)} |`,
  ];
}

/** The command that reproduces a run, from the settings it recorded (`doc` checked against the run's kind). */
export function command(run: string, raw: unknown): string {
  const kind = kindOf(run);
  if (kind === 'profile') {
    const doc = parseRun(kind, run, raw);
    return profileCommand(run, doc);
  }
  if (kind === 'load') {
    const doc = parseRun(kind, run, raw);
    return `npm run bench:load -- --duration ${doc.duration} --rounds ${doc.throughput[0]?.ratios.length ?? 0} --connections ${doc.connections} --log-level ${doc.logLevel}`;
  }
  if (kind === 'ws') {
    const doc = parseRun(kind, run, raw);
    return `npm run bench:ws -- --seconds ${doc.seconds} --rounds ${doc.rounds} --in-flight ${doc.inFlight} --rate ${doc.latency.rate}`;
  }
  if (kind === 'sync') {
    const doc = parseRun(kind, run, raw);
    const polls = doc.rows.map((r) => /^send, then poll .*every (\d+) ms/.exec(r.flow)?.[1]).filter((p): p is string => p !== undefined);
    return `npm run bench:sync -- --trials ${doc.trials} --block-time ${doc.blockTimeS} --poll ${polls.join(',')}`;
  }
  throw new Error(`no command for bench/results/${run}.json`);
}

/** bench:profile's command for a run, from what it recorded (its base named as it was: a ref, or the commit). */
export function profileCommand(run: string, doc: ProfileRunDoc): string {
  const base = doc.base.commit === '.' ? ' --base .' : doc.base.ref === 'main' ? '' : ` --base ${doc.base.ref}`;
  const label = run === 'profile' ? '' : ` --label ${run}`;
  const workers = doc.workers !== undefined ? ` --workers ${doc.workers} --worker ${doc.worker ?? 0}` : '';
  const bytes = doc.compared.some((c) => c.bytes !== undefined) ? ' --bytes' : '';
  const echo = doc.echo !== undefined ? ' --echo' : '';
  return `npm run bench:profile --${base} --requests ${doc.requests} --warmup ${doc.warmup} --rounds ${doc.rounds}${workers}${echo}${bytes}${label} --scenarios "${doc.compared.map((c) => c.scenario).join(',')}"`;
}

/** When a run was recorded (its JSON's date, where it has one) and on how many cores. */
function recorded(doc: { readonly node: string; readonly date?: string; readonly cores?: number; readonly loadAverage?: readonly number[] }): string {
  const date = doc.date !== undefined ? doc.date.slice(0, 10) : 'undated';
  const load = doc.loadAverage?.[0] !== undefined ? `, load average ${doc.loadAverage[0]} at its start` : '';
  return `${date}${doc.cores !== undefined ? `, ${doc.cores} cores` : ''}, ${doc.node}${load}`;
}

/** The Performance block: the figures, then the command behind each run; `linkBase` '../' for a page of docs/. */
export function renderPerf(read: ReadRun = readRun, linkBase = ''): string {
  base = linkBase;
  const sync = (run: 'sync-1s' | 'sync-0.25s') => parseRun('sync', run, read(run));
  const docs = {
    profile: parseRun('profile', 'profile', read('profile')) as ProfileRunDoc,
    load: parseRun('load', 'load', read('load')),
    ws: parseRun('ws', 'ws', read('ws')),
    'sync-1s': sync('sync-1s'),
    'sync-0.25s': sync('sync-0.25s'),
  } satisfies Record<(typeof PERF_RUNS)[number], unknown>;
  const rows = [
    ...profileRows('profile', docs.profile),
    ...loadRows('load', docs.load),
    ...wsRows('ws', docs.ws),
    ...syncRows('sync-1s', docs['sync-1s']),
    ...syncRows('sync-0.25s', docs['sync-0.25s']),
  ];
  const commands = PERF_RUNS.map((run) => `| ${link(run)} | ${recorded(docs[run])} | \`${command(run, docs[run])}\` |`);
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

/** The in-process suites of `npm run bench` (latest.json): each task's median and its ratio to its suite's reference. */
export function renderMicro(): string {
  const doc = readChecked('micro', 'latest');
  const rows = doc.rows.map((r) => `| ${r.suite} | ${r.task} | ${r.medianUs} | ${r.ratio === null ? "at the timer's resolution" : x(r.ratio, 3)} |`);
  return [`| suite | task | median µs | ratio to the suite's reference (recorded ${doc.date.slice(0, 10)}, ${doc.node}) |`, '|---|---|---|---|', ...rows].join(
    '\n',
  );
}
