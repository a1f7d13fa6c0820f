/**
 * `npm run bench:ws`: the WebSocket transport against HTTP on the same txgate, in the same run.
 *
 * txgate (websocket on) on core 0, the stub sequencer and the load generator (ws-client.ts) on
 * core 1. For valid submissions (a pre-signed pool of distinct transactions from 16 senders)
 * and eth_chainId: one WebSocket with 64 in flight vs 64 keep-alive HTTP connections (one
 * request each at a time), alternating, ROUNDS rounds: req/s and the server's CPU µs per
 * request (the figure the generator does not bound). Then the latency at ~1,000 req/s of valid
 * submissions (open loop): straight to the stub, through txgate over HTTP, over WebSocket.
 * Loopback only.
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { submissionBodies } from '../common/transfers.js';
import { initCrypto } from '../../src/base/native.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { differsFrom, flagged, medianName, noisyNote, roundsSpread } from '../common/figures.js';
import { startBench } from '../common/bench-run.js';
import { cpuMicros } from '../common/cpu.js';
import { median, round } from '../common/figures.js';
import { RESULTS_DIR } from '../common/paths.js';
import { startTxgate } from '../common/txgate.js';
import { resultsJson, type WsRun } from '../common/results-schema.js';
import { startStub } from '../servers/stub-sequencer.js';
import { driver } from '../common/paths.js';

const run = startBench('bench:ws', 'The WebSocket transport against HTTP on the same txgate: req/s and server CPU per request, then latency at a fixed rate.', {
  seconds: { kind: 'int', quick: 2, full: 5, help: 'seconds per measurement' },
  rounds: {
    kind: 'int',
    median: true,
    quick: 3,
    full: 3,
    help: 'alternating rounds (HTTP, WebSocket), an odd number ≥ 3 (the median of the rounds is reported)',
  },
  'in-flight': { kind: 'int', quick: 64, help: 'requests in flight (HTTP connections; frames on the one WebSocket)' },
  rate: { kind: 'int', quick: 1000, help: 'req/s of the latency measurement' },
  pool: { kind: 'int', quick: 4000, full: 20000, help: 'pre-signed distinct transactions' },
});
const opt = run.opt;
const SECONDS = opt.seconds;
const ROUNDS = opt.rounds;
const IN_FLIGHT = opt['in-flight'];
const RATE = opt.rate;
const dir = run.tmp;
const KEY = 'txg_ws_' + randomBytes(24).toString('base64url');
const children = run.children;
const cores = Number(spawnSync('nproc').stdout.toString().trim());
const SERVER_CORE = '0';
const LOAD_CORE = cores >= 2 ? String(cores - 1) : '0';

await initCrypto();
const poolSize = opt.pool;
process.stderr.write(`signing ${poolSize} transactions…\n`);
const valid = submissionBodies(poolSize);

const chainId = [JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] })];
const STUB = 18210;
const GATE = 18211;
await startStub({ port: STUB, cores: LOAD_CORE, children });
const { proc: gate } = await startTxgate({
  config: {
    listen: { host: '127.0.0.1', port: GATE },
    internal: { enabled: false },
    workers: 1,
    log: { level: 'warn' },
    dedup: { acceptedTtlMs: 0 },
    websocket: { enabled: true, maxInFlight: 1024 },
    chains: [
      {
        chainId: 4663,
        hosts: ['127.0.0.1', 'localhost'],
        sequencers: [`http://127.0.0.1:${STUB}`],
        forward: { maxInFlight: 4096, connections: 64, timeoutMs: 5000 },
      },
    ],
  },
  accounts: {
    accounts: [
      {
        id: 'ws-bench',
        keySha256: [keySha256(KEY)],
        grants: [{ chainId: 4663, rateLimit: { perSecond: 1e6, burst: 1e6 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: '1000000000000' }],
      },
    ],
  },
  prefix: ['taskset', '-c', SERVER_CORE],
  log: 'ignore',
  parent: dir,
  children,
});

let inputs = 0;
function generate(input: Record<string, unknown>): Promise<Record<string, number>> {
  const file = join(dir, `in-${inputs++}.json`);
  writeFileSync(file, JSON.stringify({ key: KEY, inFlight: IN_FLIGHT, seconds: SECONDS, ...input }));
  return new Promise((resolve, reject) => {
    const c = spawn('taskset', ['-c', LOAD_CORE, 'node', driver('ws-client'), file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d));
    c.stderr.on('data', (d: Buffer) => (out += d));
    c.on('exit', () => {
      const m = /RESULT (\{.*\})/.exec(out);
      if (m === null) reject(new Error(`generator failed: ${out}`));
      else resolve(JSON.parse(m[1]!));
    });
  });
}

async function measured(mode: 'ws' | 'http', bodies: string[]): Promise<{ rps: number; cpuUsPerReq: number; non200: number }> {
  await generate({ mode, url: `http://127.0.0.1:${GATE}/`, bodies, seconds: 1 }); // warm-up
  const c0 = cpuMicros(gate.pid!);
  const r = await generate({ mode, url: `http://127.0.0.1:${GATE}/`, bodies });
  const c1 = cpuMicros(gate.pid!);
  return { rps: r.rps!, cpuUsPerReq: round((c1 - c0) / r.requests!, 1), non200: r.non200! };
}

const report: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, seconds: SECONDS, rounds: ROUNDS, inFlight: IN_FLIGHT };
const lines: string[] = [];
const say = (s: string) => {
  lines.push(s);
  process.stdout.write(s + '\n');
};
say(`Each ratio: WebSocket against HTTP in the same round; the ${medianName(ROUNDS)}, every round in brackets.\n`);
say(
  `| scenario | HTTP req/s (${IN_FLIGHT} connections) | WebSocket req/s (1 connection, ${IN_FLIGHT} in flight) | WS / HTTP req/s, all rounds | server CPU µs/req HTTP / WS | WS / HTTP CPU per request | non-200 |`,
);
say('|---|---|---|---|---|---|---|');
const throughput: Record<string, unknown>[] = [];
for (const [name, bodies] of [
  ['valid submission', valid],
  ['eth_chainId', chainId],
] as const) {
  const rounds: { http: Awaited<ReturnType<typeof measured>>; ws: Awaited<ReturnType<typeof measured>> }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const http = await measured('http', [...bodies]);
    const ws = await measured('ws', [...bodies]);
    rounds.push({ http, ws });
  }
  const rpsRatios = rounds.map((r) => round(r.ws.rps / r.http.rps, 2));
  const cpuRatios = rounds.map((r) => round(r.ws.cpuUsPerReq / r.http.cpuUsPerReq, 2));
  const m = (f: (r: (typeof rounds)[number]) => number) => median(rounds.map(f));
  const row = {
    scenario: name,
    httpRps: m((r) => r.http.rps),
    wsRps: m((r) => r.ws.rps),
    rpsRatios,
    httpCpu: m((r) => r.http.cpuUsPerReq),
    wsCpu: m((r) => r.ws.cpuUsPerReq),
    // Each ratio is of one round (WebSocket against the HTTP run beside it); the medians of those.
    rpsRatio: median(rpsRatios),
    cpuRatio: median(cpuRatios),
    cpuRatios,
    non200: rounds.reduce((n, r) => n + r.http.non200 + r.ws.non200, 0),
  };
  throughput.push(row);
  say(
    `| ${name} | ${row.httpRps} | ${row.wsRps} | ${row.rpsRatio}x${noisyNote(roundsSpread(rpsRatios))} (${rpsRatios.join(', ')}) | ${row.httpCpu} / ${row.wsCpu} | **${row.cpuRatio}x**${noisyNote(roundsSpread(cpuRatios))} (${cpuRatios.join(', ')}) | ${row.non200} |`,
  );
}
report.throughput = throughput;

say('');
say(`Latency of valid submissions at ${RATE} req/s (open loop, ${SECONDS} s, the first half second dropped):`);
say('');
say('| path | p50 µs | p99 µs | added p50 / p99 µs (vs straight to the stub) | non-200 |');
say('|---|---|---|---|---|');
const direct = await generate({ mode: 'http', url: `http://127.0.0.1:${STUB}/`, bodies: valid, inFlight: 16, rate: RATE });
const viaHttp = await generate({ mode: 'http', url: `http://127.0.0.1:${GATE}/`, bodies: valid, inFlight: 16, rate: RATE });
const viaWs = await generate({ mode: 'ws', url: `http://127.0.0.1:${GATE}/`, bodies: valid, rate: RATE });
for (const [name, r] of [
  ['straight to the stub (HTTP, 16 connections)', direct],
  ['txgate over HTTP (16 connections)', viaHttp],
  ['txgate over one WebSocket', viaWs],
] as const)
  say(
    `| ${name} | ${r.p50} | ${r.p99} | ${r === direct ? '—' : `${flagged(r.p50! - direct.p50!, '')} / ${flagged(r.p99! - direct.p99!, '')}`} | ${r.non200} |`,
  );
report.latency = { rate: RATE, direct, viaHttp, viaWs };

const differs = run.outDir === RESULTS_DIR ? '' : differsFrom(RESULTS_DIR, 'ws.json', { seconds: SECONDS, rounds: ROUNDS, inFlight: IN_FLIGHT });
if (differs !== '') say(`\n${differs}`);
const mdPath = run.write('ws.md', lines.join('\n') + '\n');
// The report is built section by section; its shape is the schema's WsRun (test/unit/bench-results.test.ts reads the committed one).
run.write('ws.json', resultsJson('ws', report as unknown as WsRun));
process.stdout.write(`\nwritten to ${mdPath} and ws.json\n`);
process.exit(0);
