/**
 * `npm run bench:load`: txgate under wrk, against a bare uWS echo measured in the same run.
 *
 * Server on core 0 (taskset), wrk and the stub sequencer on core 1. For each scenario
 * (eth_chainId keep-alive, a 401, a 402, valid submissions from a pre-signed pool of distinct
 * transactions from several senders) it reports req/s, p50/p99/p99.9 latency and server CPU µs
 * per request, each as a ratio to the echo, and also against the conforming floor
 * (floor-server.ts: the contract's own work in one flat handler). Then the
 * latency txgate adds at ~1,000 req/s (client→txgate→stub minus client→stub), metrics on vs
 * off, 1 vs 2 worker threads, the sync send beside the plain send (the stub answering with the
 * receipt at once), and a saturated soak (in-flight bound, 503 overloaded, RSS growth).
 *
 * The fixed-rate section (`rate`): open-loop valid submissions at `--rate` per second (distinct
 * signed transactions, rate-probe.ts) to the stub alone (direct, the reference), through txgate
 * to the stub over HTTP, and through txgate to the same stub over ws://, alternating; txgate's
 * GC pauses during the run (gc-trace.ts: perf_hooks 'gc' entries from its serving thread) set
 * against the slowest 0.1% of requests.
 *
 * load.json (fields other tools read; names stable):
 * - `throughput[]`: {scenario, txgate, echo, floor?: Measured, ratio (txgate/echo req/s, median
 *   round), ratios, cpuRatio, floorRatios?}; Measured: {requests, duration_us, non2xx,
 *   socket_errors, p50, p99, p999 (µs), rps, cpuUsPerReq}.
 * - `latency[]` (closed loop, one connection): {placement, direct: {p50, p99, n}, via: {…},
 *   added: {p50, p99}} (µs).
 * - `rate` (open loop): {rate, secondsPerPath, warmupSeconds, firstWarmupSeconds, connections,
 *   rounds, rows[]}; a row: {path: 'direct' | 'http' | 'ws', p50, p99, p999 (µs, from when each request was due),
 *   n, non200, unanswered, maxQueued, probeGcMs} and, for 'http' and 'ws', `added` {p50, p99,
 *   p999} (the row minus direct, µs), `addedP99OverP50`, `reloads` (account or config reloads
 *   logged during the run) and `gc`: {minor, major, other, longestMinorMs, longestMajorMs,
 *   tailRequests, tailOverlappingGc, tailOverlappingMajor, requestsOverlappingMajor, tail[]:
 *   {at (epoch ms due), us, gc[]: {kind, ms, startOffsetMs}}}.
 * - `sync[]`, `client`, `metrics[]`, `workers[]`, `soak`: as their sections print them.
 *
 * Needs wrk (Debian: apt-get install wrk) and taskset (util-linux). Loopback only.
 */
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { keySha256 } from '../../src/accounts/keys.js';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { differsFrom } from '../common/figures.js';
import { startBench } from '../common/bench-run.js';
import { round } from '../common/figures.js';
import { RESULTS_DIR } from '../common/paths.js';
import { resultsJson, type LoadRun } from '../common/results-schema.js';
import type { LoadContext } from '../load/context.js';
import { loadFixtures } from '../load/fixtures.js';
import { Harness, stop } from '../load/harness.js';
import { rate } from '../load/rate.js';
import { latency, latencySvg, throughput, type ThroughputRow } from '../load/throughput.js';
import { client, metrics, soak, sync, workers } from '../load/variants.js';

const SECTIONS = ['throughput', 'latency', 'rate', 'client', 'metrics', 'workers', 'sync', 'soak'];
const SCENARIOS = ['eth_chainId', '401 unauthorized', '402 fee_rejected', 'valid submission', 'valid submission, sender-listed grant'];
const run = startBench(
  'bench:load',
  'txgate under wrk against a bare uWS echo and the conforming floor, in the same run. The quick run measures the main scenarios, the added latency (one placement) and the sync send; --full adds the variants (busyPoll, recover, system libsecp256k1), every placement, the upstream client, metrics on/off, 1 vs 2 threads and the soak.',
  {
    duration: { kind: 'int', quick: 2, full: 5, help: 'seconds per measurement' },
    rounds: {
      kind: 'int',
      median: true,
      quick: 3,
      full: 3,
      help: 'alternating rounds (echo, floor, txgate) per scenario, an odd number ≥ 3 (the median round is reported)',
    },
    connections: { kind: 'int', quick: 64, help: 'wrk connections' },
    soak: { kind: 'int', min: 0, quick: 60, help: 'seconds of the saturated soak (after a 20-s warm-up; 0: none)' },
    pool: { kind: 'int', quick: 4000, full: 20000, help: 'pre-signed distinct transactions' },
    rate: { kind: 'int', min: 1, quick: 1000, help: 'submissions per second of the fixed-rate section (open loop)' },
    'rate-seconds': { kind: 'int', min: 1, quick: 10, full: 30, help: 'seconds measured per path in the fixed-rate section, split over --rounds' },
    'rate-connections': { kind: 'int', min: 1, quick: 32, help: "the fixed-rate probe's keep-alive connections" },
    'ws-connections': { kind: 'int', min: 1, quick: 2, help: "txgate's connections to a ws:// sequencer (forward.wsConnections)" },
    'log-level': { kind: 'text', arg: 'LEVEL', quick: 'info', help: "txgate's log level" },
    only: { kind: 'list', choices: SECTIONS, quick: ['throughput', 'latency', 'rate', 'sync'], full: SECTIONS, help: 'these sections' },
    scenarios: { kind: 'list', choices: SCENARIOS, help: 'these throughput scenarios' },
    'node-args': { kind: 'text', arg: 'ARGS', quick: '', help: 'node options for txgate, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"' },
    'port-base': {
      kind: 'int',
      min: 1024,
      quick: 18100,
      help: 'first of the loopback ports used (the echo PORT, the floor PORT+1, the stubs PORT+100..PORT+103, the txgates from PORT+200 and their internal ports 1000 above)',
    },
  },
);
const opt = run.opt;
for (const tool of ['wrk', 'taskset']) {
  if (spawnSync('which', [tool]).status !== 0) {
    process.stderr.write(`bench:load needs ${tool}: apt-get install -y ${tool === 'wrk' ? 'wrk' : 'util-linux'}\n`);
    process.exit(1);
  }
}
const cores = Number(spawnSync('nproc').stdout.toString().trim());
const SERVER_CORES = '0';
const LOAD_CORES = cores >= 2 ? String(cores - 1) : '0'; // on one core everything shares it

// The fixed-rate section's rounds and warm-ups, and the distinct transactions each of its paths
// needs (every round's warm-up included).
const rateOptions = { rate: opt.rate, seconds: opt['rate-seconds'], rounds: opt.rounds, connections: opt['rate-connections'], warmup: 0.5, firstWarmup: 2 };
const rateNeeds =
  opt.only?.includes('rate') === false
    ? 0
    : Math.ceil(opt.rate * (rateOptions.seconds + rateOptions.firstWarmup + rateOptions.warmup * rateOptions.rounds)) + rateOptions.rounds;
const f = await loadFixtures(run.tmp, Math.max(opt.pool, rateNeeds));
const h = new Harness(
  {
    dir: run.tmp,
    children: run.children,
    serverCores: SERVER_CORES,
    loadCores: LOAD_CORES,
    duration: opt.duration,
    connections: opt.connections,
    rounds: opt.rounds,
    logLevel: opt['log-level'] ?? 'info',
    wsConnections: opt['ws-connections'],
    nodeArgs: (opt['node-args'] ?? '').split(' ').filter((a) => a !== ''),
    portBase: opt['port-base'],
  },
  f.accounts,
);

// --- the run ---------------------------------------------------------------------------------
const report: Record<string, unknown> = {
  node: process.version,
  cores,
  duration: opt.duration,
  connections: opt.connections,
  rounds: opt.rounds,
  logLevel: opt['log-level'],
  date: new Date().toISOString(),
  // The host's load average (1, 5, 15 min) at the start: how shared the machine was.
  loadAverage: loadavg().map((l) => round(l, 2)),
};
const lines: string[] = [];
const say = (s: string) => {
  lines.push(s);
  process.stdout.write(s + '\n');
};

const stub = await h.stub(0, LOAD_CORES);
await h.startReferences(keySha256(f.keys.load), ANVIL_TIP_ADDRESS);
const gate = await h.gate({ sequencer: `http://127.0.0.1:${h.port.stub(0)}` });
const want = (name: string) => opt.only === undefined || opt.only.includes(name);
const c: LoadContext = { h, f, full: run.full, wantScenario: (name) => opt.scenarios === undefined || opt.scenarios.includes(name), gate, say };

if (want('throughput')) report.throughput = await throughput(c);
if (want('latency')) report.latency = await latency(c);
if (want('rate')) report.rate = await rate(c, rateOptions);
if (want('client')) report.client = await client(c);
if (want('metrics')) report.metrics = await metrics(c);
if (want('workers') && cores >= 2) report.workers = await workers(c);
if (want('sync')) report.sync = await sync(c);
await gate.stop();
if (want('soak') && opt.soak > 0) report.soak = await soak(c, opt.soak);
await h.stopReferences();
await stop(stub);

const rows = report.throughput as ThroughputRow[] | undefined;
if (rows !== undefined && rows.length > 0) {
  run.write('load.svg', latencySvg(rows, { connections: opt.connections, rounds: opt.rounds, duration: opt.duration }));
  lines.push('', '![latency percentiles](load.svg)');
}
const differs = differsFrom(
  RESULTS_DIR,
  'load.json',
  { duration: opt.duration, rounds: opt.rounds, connections: opt.connections, logLevel: opt['log-level'] ?? 'info' },
  (doc, k) => (k === 'rounds' ? (doc.rounds ?? (doc.throughput as { ratios?: unknown[] }[] | undefined)?.[0]?.ratios?.length) : doc[k]),
);
if (differs !== '' && run.outDir !== RESULTS_DIR) say(`\n${differs}`);
const mdPath = run.write('load.md', lines.join('\n') + '\n');
run.write('load.json', resultsJson('load', report as unknown as LoadRun));
process.stdout.write(`\nwritten to ${mdPath}, load.json and load.svg\n`);
process.exit(0);
