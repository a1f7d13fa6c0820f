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
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { sign1559 } from '../../src/dev/sign.js';
import { privateKeyToAddress } from 'viem/accounts';
import { initCrypto, SYSTEM_SECP256K1_PATH } from '../../src/native.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { gcAgainst, gcObserverSource, readGc, type Sample } from '../drivers/gc-trace.js';
import { loadavg } from 'node:os';
import { differsFrom, flagged, medianName, noisyNote, roundsProblem, roundsSpread } from '../shared/figures.js';
import { cpuMicros, median, medianBy, RESULTS_DIR, round, startBench } from '../shared/lib.js';
import { stackedBarsSvg, type Bar } from '../shared/svg.js';
import { TXGATE_CLI, driver, server } from '../shared/paths.js';

const SECTIONS = ['throughput', 'latency', 'rate', 'client', 'metrics', 'workers', 'sync', 'soak'];
const SCENARIOS = ['eth_chainId', '401 unauthorized', '402 fee_rejected', 'valid submission', 'valid submission, sender-listed grant'];
const run = startBench(
  'bench:load',
  'txgate under wrk against a bare uWS echo and the conforming floor, in the same run. The quick run measures the main scenarios, the added latency (one placement) and the sync send; --full adds the variants (busyPoll, recover, system libsecp256k1), every placement, the upstream client, metrics on/off, 1 vs 2 threads and the soak.',
  {
    duration: { kind: 'int', quick: 2, full: 5, help: 'seconds per measurement' },
    rounds: { kind: 'int', quick: 3, full: 3, help: 'alternating rounds (echo, floor, txgate) per scenario, an odd number ≥ 3 (the median round is reported)' },
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
  },
);
const opt = run.opt;
if (roundsProblem(opt.rounds) !== null) {
  process.stderr.write(`bench:load: ${roundsProblem(opt.rounds)} (npm run bench:load -- --help lists the options)\n`);
  process.exit(2);
}
const DURATION = opt.duration;
const CONNS = opt.connections;
const ROUNDS = opt.rounds;
const dir = run.tmp;
const KEY = 'txg_load_' + randomBytes(24).toString('base64url');
const KEY_LISTED = 'txg_load_listed_' + randomBytes(24).toString('base64url');
const KEY_SYNC = 'txg_load_sync_' + randomBytes(24).toString('base64url');
const children = run.children;

for (const tool of ['wrk', 'taskset']) {
  if (spawnSync('which', [tool]).status !== 0) {
    process.stderr.write(`bench:load needs ${tool}: apt-get install -y ${tool === 'wrk' ? 'wrk' : 'util-linux'}\n`);
    process.exit(1);
  }
}
const cores = Number(spawnSync('nproc').stdout.toString().trim());
const SERVER_CORES = '0';
const LOAD_CORES = cores >= 2 ? String(cores - 1) : '0'; // on one core everything shares it

// --- fixtures: accounts, pools of signed transactions, wrk scripts -------------------------
await initCrypto();
const senders = Array.from({ length: 16 }, () => '0x' + randomBytes(32).toString('hex'));
const addressOf = (privateKey: string) => privateKeyToAddress(privateKey as `0x${string}`);
const RATE_ROUNDS = opt.rounds;
/** Unrecorded seconds before each round's samples; the first round's (a fresh txgate's JIT) longer. */
const RATE_WARMUP = 0.5;
const RATE_FIRST_WARMUP = 2;
/** Distinct transactions each path gets in the fixed-rate section (every round's warm-up included). */
const rateNeeds =
  opt.only?.includes('rate') === false ? 0 : Math.ceil(opt.rate * (opt['rate-seconds'] + RATE_FIRST_WARMUP + RATE_WARMUP * RATE_ROUNDS)) + RATE_ROUNDS;
const poolSize = Math.max(opt.pool, rateNeeds);
const rpcBody = (method: string, params: unknown[], id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const tx = (i: number, value = 1_000_000_000_000n, to: string = ANVIL_TIP_ADDRESS) =>
  sign1559(
    { chainId: 4663, nonce: Math.floor(i / senders.length), maxPriorityFeePerGas: 1_000_000_000n, maxFeePerGas: 3_000_000_000n, gas: 21000n, to, value },
    senders[i % senders.length]!,
  );
process.stderr.write(`signing ${poolSize} transactions from ${senders.length} senders…\n`);
const validBodies = Array.from({ length: poolSize }, (_, i) => rpcBody('eth_sendRawTransaction', [tx(i)], i));
writeFileSync(join(dir, 'valid.txt'), validBodies.join('\n') + '\n');
// The same transactions sent with eth_sendRawTransactionSync.
writeFileSync(join(dir, 'sync.txt'), validBodies.map((b) => b.replace('"eth_sendRawTransaction"', '"eth_sendRawTransactionSync"')).join('\n') + '\n');
const untipped = rpcBody('eth_sendRawTransaction', [tx(0, 0n, '0x3333333333333333333333333333333333333333')]);

writeFileSync(
  join(dir, 'accounts.json'),
  JSON.stringify({
    accounts: [
      {
        id: 'load',
        keySha256: [keySha256(KEY)],
        grants: [{ chainId: 4663, rateLimit: { perSecond: 1e6, burst: 1e6 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: '1000000000000' }],
      },
      {
        // The same grant with a sender allow-list naming every signer of the pool: each
        // submission's sender is recovered and looked up.
        id: 'listed',
        keySha256: [keySha256(KEY_LISTED)],
        grants: [
          {
            chainId: 4663,
            rateLimit: { perSecond: 1e6, burst: 1e6 },
            tipAddresses: [ANVIL_TIP_ADDRESS],
            minTipWei: '1000000000000',
            senders: senders.map(addressOf),
          },
        ],
      },
      {
        // The first grant, with the sync send.
        id: 'sync',
        keySha256: [keySha256(KEY_SYNC)],
        grants: [{ chainId: 4663, rateLimit: { perSecond: 1e6, burst: 1e6 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: '1000000000000', sync: true }],
      },
    ],
  }),
);

function luaStatic(name: string, body: string, headers: Record<string, string>): string {
  const h = Object.entries(headers)
    .map(([k, v]) => `wrk.headers["${k}"] = "${v}"`)
    .join('\n');
  const f = join(dir, `${name}.lua`);
  writeFileSync(f, `wrk.method = "POST"\nwrk.body = [[${body}]]\n${h}\n${DONE}`);
  return f;
}
function luaPool(name: string, file: string, headers: Record<string, string>): string {
  const h = Object.entries(headers)
    .map(([k, v]) => `["${k}"] = "${v}"`)
    .join(', ');
  const f = join(dir, `${name}.lua`);
  writeFileSync(
    f,
    `local bodies = {}\nfor line in io.lines("${file}") do bodies[#bodies + 1] = line end\nlocal i = math.random(#bodies)\nlocal headers = { ${h} }\n` +
      `request = function()\n  i = i % #bodies + 1\n  return wrk.format("POST", "/", headers, bodies[i])\nend\n${DONE}`,
  );
  return f;
}
const DONE = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nRESULT {"requests":%d,"duration_us":%d,"non2xx":%d,"socket_errors":%d,"p50":%d,"p99":%d,"p999":%d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9)))
end`;

const JSON_CT = { 'Content-Type': 'application/json' };
const scenarios = {
  eth_chainId: luaStatic('chainid', rpcBody('eth_chainId', []), JSON_CT),
  '401 unauthorized': luaStatic('401', validBodies[0]!, { ...JSON_CT, 'X-Api-Key': 'txg_wrong_key' }),
  '402 fee_rejected': luaStatic('402', untipped, { ...JSON_CT, 'X-Api-Key': KEY }),
  'valid submission': luaPool('valid', join(dir, 'valid.txt'), { ...JSON_CT, 'X-Api-Key': KEY }),
  'valid submission, sender-listed grant': luaPool('listed', join(dir, 'valid.txt'), { ...JSON_CT, 'X-Api-Key': KEY_LISTED }),
};
/** The sync section's scripts: the plain send and the sync send, with the sync grant's key. */
const syncScripts = {
  plain: luaPool('sync-plain', join(dir, 'valid.txt'), { ...JSON_CT, 'X-Api-Key': KEY_SYNC }),
  sync: luaPool('sync', join(dir, 'sync.txt'), { ...JSON_CT, 'X-Api-Key': KEY_SYNC }),
};

// --- processes -------------------------------------------------------------------------------
function start(cmd: string[], core: string, name: string, readyUrl?: string): Promise<ChildProcess> {
  // txgate's logs go to a file (as to a log shipper that keeps up); the others report 'ready'.
  const logFd = readyUrl !== undefined ? openSync(join(dir, `${name}-${portSeq}.log`), 'w') : 'pipe';
  const child = spawn('taskset', ['-c', core, ...cmd], { stdio: ['ignore', logFd, 'pipe'] });
  children.push(child);
  if (readyUrl !== undefined) {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    return (async () => {
      for (let i = 0; i < 300; i++) {
        if (child.exitCode !== null) throw new Error(`${name} exited: ${err}`);
        try {
          if ((await fetch(readyUrl)).status === 200) return child;
        } catch {
          /* starting */
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`${name} not ready: ${err}`);
    })();
  }
  return new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`${name} did not start: ${out}`)), 15_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready') || out.includes('txgate listening')) {
        clearTimeout(t);
        child.stdout!.removeListener('data', onData);
        child.stdout!.resume();
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (c) => reject(new Error(`${name} exited ${c}: ${out}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([done, new Promise((r) => setTimeout(r, 5000))]);
  child.kill('SIGKILL');
}

let portSeq = 18300;
async function startTxgate(o: {
  workers?: number;
  metrics?: boolean;
  maxInFlight?: number;
  sequencer: string;
  secp256k1?: 'npm' | 'system';
  signature?: 'recover' | 'curve';
  busyPoll?: boolean;
  /** The sync send on, in this mode (receipt mode: the receipts read from `sequencer` too), no receipt held for resends. */
  sync?: 'forward' | 'receipt';
  /** Record txgate's GC pauses to this file (gc-trace.ts), written as its threads end. */
  gcOut?: string;
}): Promise<{ child: ChildProcess; url: string; log: string }> {
  const port = portSeq++;
  const cfg = join(dir, `txgate-${port}.json`);
  writeFileSync(
    cfg,
    JSON.stringify({
      listen: { host: '127.0.0.1', port },
      internal: { host: '127.0.0.1', port: port + 1000 },
      workers: o.workers ?? 1,
      metrics: { enabled: o.metrics ?? true },
      crypto: { secp256k1: o.secp256k1 ?? 'npm', ...(o.signature !== undefined ? { signature: o.signature } : {}) },
      busyPoll: o.busyPoll ?? false,
      log: { level: opt['log-level'] ?? 'info' },
      dedup: { acceptedTtlMs: 0 },
      chains: [
        {
          chainId: 4663,
          hosts: ['127.0.0.1', 'localhost'],
          sequencers: [o.sequencer],
          forward: { maxInFlight: o.maxInFlight ?? 4096, connections: 64, wsConnections: opt['ws-connections'], timeoutMs: 5000 },
          // Held receipts off, as dedup is: the pool repeats, and a resend answered from a held
          // receipt would measure the cache.
          ...(o.sync !== undefined
            ? { ...(o.sync === 'receipt' ? { rpc: o.sequencer } : {}), sync: { enabled: true, mode: o.sync, receiptTtlMs: 0, maxWaiting: 1024 } }
            : {}),
        },
      ],
      accounts: { file: join(dir, 'accounts.json') },
    }),
  );
  const cores = o.workers !== undefined && o.workers > 1 ? `0-${o.workers - 1}` : SERVER_CORES;
  const nodeArgs = (opt['node-args'] ?? '').split(' ').filter((a) => a !== '');
  if (o.gcOut !== undefined) {
    const pre = join(dir, `gc-observer-${port}.cjs`);
    writeFileSync(pre, gcObserverSource(o.gcOut));
    nodeArgs.push('--require', pre);
  }
  const log = join(dir, `txgate-${portSeq}.log`);
  const child = await start(['node', ...nodeArgs, TXGATE_CLI, '--config', cfg], cores, 'txgate', `http://127.0.0.1:${port}/ready`);
  return { child, url: `http://127.0.0.1:${port}/`, log };
}

function rssMB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

interface WrkResult {
  requests: number;
  duration_us: number;
  non2xx: number;
  socket_errors: number;
  p50: number;
  p99: number;
  p999: number;
}
interface Measured extends WrkResult {
  rps: number;
  cpuUsPerReq: number;
}

function wrk(url: string, script: string, seconds = DURATION, connections = CONNS): Promise<WrkResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', ['-c', LOAD_CORES, 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    child.on('exit', () => {
      const m = /RESULT (\{.*\})/.exec(out);
      if (m === null) return reject(new Error(`wrk failed: ${out}`));
      resolve(JSON.parse(m[1]!) as WrkResult);
    });
  });
}

async function measure(pid: number, url: string, script: string, seconds = DURATION, connections = CONNS, warm = true): Promise<Measured> {
  if (warm) await wrk(url, script, 1, connections); // warm-up (JIT, pools)
  const c0 = cpuMicros(pid);
  const r = await wrk(url, script, seconds, connections);
  const c1 = cpuMicros(pid);
  return { ...r, rps: Math.round(r.requests / (r.duration_us / 1e6)), cpuUsPerReq: round((c1 - c0) / r.requests, 1) };
}

/** Fixed-rate latency probe: one keep-alive connection, one request every 1/rate s. */
function probe(url: string, bodies: string[], headers: Record<string, string>, rate: number, seconds: number): { p50: number; p99: number; n: number } {
  const script = driver('latency-probe');
  const input = join(dir, `probe-${Date.now()}.json`);
  writeFileSync(input, JSON.stringify({ url, bodies, headers, rate, seconds }));
  const r = spawnSync('taskset', ['-c', LOAD_CORES, 'node', script, input], { encoding: 'utf8' });
  const m = /RESULT (\{.*\})/.exec(r.stdout);
  if (m === null) throw new Error(`probe failed: ${r.stdout}${r.stderr}`);
  return JSON.parse(m[1]!);
}

interface Compared {
  txgate: Measured;
  echo: Measured;
  /** The conforming floor (floor-server.ts) in the same round, for the scenarios it answers. */
  floor?: Measured;
  floorRatios?: number[];
  /** The median round's ratio; that round's figures are the ones shown. */
  ratio: number;
  ratios: number[];
}

/**
 * txgate against the echo (and the floor, `withFloor`), alternating ROUNDS times (echo, floor,
 * txgate, echo, …): the machine's speed drifts within seconds, and one pair of runs can miss by
 * ±10%. The round with the median txgate/echo ratio is reported, with the range of all rounds.
 */
async function compare(gatePid: number, gateUrl: string, script: string, withFloor = false): Promise<Compared> {
  const runs: { e: Measured; f?: Measured; t: Measured; ratio: number }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const e = await measure(echo.pid!, 'http://127.0.0.1:18100/', script, DURATION, CONNS, i === 0);
    const f = withFloor ? await measure(floor.pid!, 'http://127.0.0.1:18101/', script, DURATION, CONNS, i === 0) : undefined;
    const t = await measure(gatePid, gateUrl, script, DURATION, CONNS, i === 0);
    runs.push({ e, ...(f !== undefined ? { f } : {}), t, ratio: round(t.rps / e.rps, 3) });
  }
  const mid = medianBy(runs, (r) => r.ratio);
  const floorPart = mid.f !== undefined ? { floor: mid.f, floorRatios: runs.map((r) => round(r.f!.rps / r.e.rps, 3)) } : {};
  return { txgate: mid.t, echo: mid.e, ratio: mid.ratio, ratios: runs.map((r) => r.ratio), ...floorPart };
}

/** The range of the rounds' ratios, for a table cell. */
const spread = (ratios: number[]) => (ratios.length > 1 ? `${Math.min(...ratios)}–${Math.max(...ratios)}` : '—');

function throughputRow(name: string, c: Compared): Record<string, unknown> {
  const { txgate: t, echo: e, ratio, ratios } = c;
  say(
    `| ${name} | ${t.rps} | ${e.rps} | ${ratio}x${noisyNote(roundsSpread(ratios))} | ${spread(ratios)} | ${t.p50} / ${t.p99} / ${t.p999} | ${e.p50} / ${e.p99} / ${e.p999} | ${t.cpuUsPerReq} | ${e.cpuUsPerReq} | ${t.non2xx} |`,
  );
  return {
    scenario: name,
    txgate: t,
    echo: e,
    ratio,
    ratios,
    spread: round(roundsSpread(ratios), 3),
    cpuRatio: round(t.cpuUsPerReq / e.cpuUsPerReq, 2),
    ...(c.floor !== undefined ? { floor: c.floor, floorRatios: c.floorRatios } : {}),
  };
}

/** The scenarios the conforming floor answers as txgate does. */
const FLOOR_SCENARIOS = new Set(['eth_chainId', '401 unauthorized', '402 fee_rejected', 'valid submission']);

function floorTable(rows: Record<string, unknown>[]): void {
  const withFloor = rows.filter((r) => r.floor !== undefined) as unknown as {
    scenario: string;
    txgate: Measured;
    echo: Measured;
    floor: Measured;
    ratio: number;
    floorRatios: number[];
  }[];
  if (withFloor.length === 0) return;
  say('\n## Against the conforming floor (the same rounds: echo, floor, txgate)\n');
  say(
    "The floor (`bench/servers/floor-server.ts`) is one flat uWS handler doing only what the contract makes any implementation do for these requests: read the headers, decode and JSON.parse the body, check the envelope, echo the id, send Content-Type and X-Request-Id; for a submission, hash the key and look it up (401: the error body and a log line), decode and verify the transaction (txgate's decoder, curve check as txgate's default), check the tip (402), forward it with undici (txgate's HttpUpstream), check the hash, answer, and log a request and an audit line.\n",
  );
  say(
    '| scenario | echo req/s | floor req/s | txgate req/s | floor / echo | floor / echo, all rounds | txgate / echo | **txgate / floor** | CPU µs/req echo / floor / txgate |',
  );
  say('|---|---|---|---|---|---|---|---|---|');
  for (const r of withFloor) {
    const fr = round(r.floor.rps / r.echo.rps, 3);
    say(
      `| ${r.scenario} | ${r.echo.rps} | ${r.floor.rps} | ${r.txgate.rps} | ${fr}x | ${spread(r.floorRatios)} | ${r.ratio}x | **${round(r.txgate.rps / r.floor.rps, 3)}x** | ${r.echo.cpuUsPerReq} / ${r.floor.cpuUsPerReq} / ${r.txgate.cpuUsPerReq} |`,
    );
  }
}

// --- the run ---------------------------------------------------------------------------------
const report: Record<string, unknown> = {
  node: process.version,
  cores,
  duration: DURATION,
  connections: CONNS,
  rounds: ROUNDS,
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

const stub = await start(['node', server('stub-sequencer'), '18200'], LOAD_CORES, 'stub');
const echo = await start(['node', server('echo-server'), '18100'], SERVER_CORES, 'echo');
const floor = await start(
  ['node', server('floor-server'), '18101', join(dir, 'floor.log'), keySha256(KEY), 'http://127.0.0.1:18200', ANVIL_TIP_ADDRESS, '1000000000000'],
  SERVER_CORES,
  'floor',
);
const gate = await startTxgate({ sequencer: 'http://127.0.0.1:18200' });
const want = (name: string) => opt.only === undefined || opt.only.includes(name);
const wantScenario = (name: string) => opt.scenarios === undefined || opt.scenarios.includes(name);

if (want('throughput')) {
  say(
    `\n## Throughput (1 server thread on core ${SERVER_CORES}; wrk -t1 -c${CONNS} on core ${LOAD_CORES}; ${DURATION} s each, echo (floor) and txgate alternating ${ROUNDS} times: the ${medianName(ROUNDS)}, by txgate / echo; every figure of a row from that one round)\n`,
  );
  say(
    '| scenario | txgate req/s | echo req/s | ratio | ratio, all rounds | txgate p50 / p99 / p99.9 µs | echo p50 / p99 / p99.9 µs | txgate CPU µs/req | echo CPU µs/req | non-2xx |',
  );
  say('|---|---|---|---|---|---|---|---|---|---|');
  const rows: Record<string, unknown>[] = [];
  for (const [name, script] of Object.entries(scenarios)) {
    if (!wantScenario(name)) continue;
    rows.push(throughputRow(name, await compare(gate.child.pid!, gate.url, script, FLOOR_SCENARIOS.has(name))));
  }
  // Valid submissions with other options: busy polling (CPU while idle), the recover signature
  // check (every sender recovered), and the system libsecp256k1 (when built: npm run
  // build:secp256k1).
  if (run.full && wantScenario('valid submission')) {
    const variants: [string, Parameters<typeof startTxgate>[0]][] = [
      ['valid submission, busyPoll on', { sequencer: 'http://127.0.0.1:18200', busyPoll: true }],
      ['valid submission, signature check recover', { sequencer: 'http://127.0.0.1:18200', signature: 'recover' }],
    ];
    if (existsSync(SYSTEM_SECP256K1_PATH))
      variants.push(['valid submission, system libsecp256k1', { sequencer: 'http://127.0.0.1:18200', secp256k1: 'system' }]);
    for (const [name, o] of variants) {
      const g = await startTxgate(o);
      rows.push(throughputRow(name, await compare(g.child.pid!, g.url, scenarios['valid submission'])));
      await stop(g.child);
    }
  }
  report.throughput = rows;
  floorTable(rows);
}

if (want('latency')) {
  // The client is on core 1. With the stub on the server's core, both paths cross between the
  // cores twice (client → server core → client) and differ only by txgate's hop, which is what
  // "added by txgate" means. With the stub on the client's core the direct path never leaves
  // one core and the difference also counts two cross-core wake-ups (shown for comparison).
  say('\n## Added latency at ~1,000 req/s (client→txgate→stub minus client→stub)\n');
  const bodies = validBodies.slice(0, 6000);
  const near = await start(['node', server('stub-sequencer'), '18202'], SERVER_CORES, 'stub on the server core');
  const g2 = await startTxgate({ sequencer: 'http://127.0.0.1:18202' });
  // The quick run: the default configuration with the stub on the server's core alone.
  const g3 = run.full ? await startTxgate({ sequencer: 'http://127.0.0.1:18202', busyPoll: true }) : undefined;
  const g4 = run.full ? await startTxgate({ sequencer: 'http://127.0.0.1:18202', signature: 'recover' }) : undefined;
  const headers = { ...JSON_CT, 'X-Api-Key': KEY };
  const rows: Record<string, unknown>[] = [];
  say(
    '| placement (client on core ' +
      LOAD_CORES +
      ', txgate on core ' +
      SERVER_CORES +
      ') | client → stub p50 / p99 µs | client → txgate → stub p50 / p99 µs | **added by txgate p50 / p99 µs** | samples |',
  );
  say('|---|---|---|---|---|');
  const placements: (readonly [string, string, string])[] = [[`stub on the server's core ${SERVER_CORES}`, 'http://127.0.0.1:18202/', g2.url]];
  if (g3 !== undefined && g4 !== undefined)
    placements.push(
      [`stub on the server's core ${SERVER_CORES}, busyPoll on`, 'http://127.0.0.1:18202/', g3.url],
      [`stub on the server's core ${SERVER_CORES}, signature check recover`, 'http://127.0.0.1:18202/', g4.url],
      [`stub on the client's core ${LOAD_CORES}`, 'http://127.0.0.1:18200/', gate.url],
    );
  for (const [name, stubUrl, gateUrl] of placements) {
    const direct = probe(stubUrl, bodies, JSON_CT, 1000, DURATION);
    const via = probe(gateUrl, bodies, headers, 1000, DURATION);
    const added = { p50: via.p50 - direct.p50, p99: via.p99 - direct.p99 };
    rows.push({ placement: name, direct, via, added });
    say(`| ${name} | ${direct.p50} / ${direct.p99} | ${via.p50} / ${via.p99} | **${flagged(added.p50)} / ${flagged(added.p99)}** | ${via.n} |`);
  }
  report.latency = rows;
  for (const g of [g2, g3, g4]) if (g !== undefined) await stop(g.child);
  await stop(near);
}

if (want('rate')) {
  // Open loop at a fixed rate: the direct path (the stub alone) is the reference; txgate over
  // HTTP and over ws:// forward to the same stub, on the server's core beside txgate (as the
  // latency section's placement: both paths cross between the cores alike).
  const RATE = opt.rate;
  const perRound = opt['rate-seconds'] / RATE_ROUNDS;
  say(
    `\n## Added latency at a fixed rate: ${RATE} submissions/s, open loop (${opt['rate-seconds']} s a path in ${RATE_ROUNDS} alternating rounds, ${opt['rate-connections']} connections; latency from when each request was due)\n`,
  );
  const stubPort = 18203;
  const near = await start(['node', server('stub-sequencer'), String(stubPort)], SERVER_CORES, 'stub on the server core');
  const gcFile = { http: join(dir, 'gc-http.jsonl'), ws: join(dir, 'gc-ws.jsonl') };
  const gates = {
    http: await startTxgate({ sequencer: `http://127.0.0.1:${stubPort}`, gcOut: gcFile.http }),
    ws: await startTxgate({ sequencer: `ws://127.0.0.1:${stubPort}`, gcOut: gcFile.ws }),
  };
  const paths = [
    ['direct', `http://127.0.0.1:${stubPort}/`, JSON_CT],
    ['http', gates.http.url, { ...JSON_CT, 'X-Api-Key': KEY }],
    ['ws', gates.ws.url, { ...JSON_CT, 'X-Api-Key': KEY }],
  ] as const;
  const samples: Record<string, Sample[]> = { direct: [], http: [], ws: [] };
  const stats: Record<string, { non200: number; unanswered: number; maxQueued: number; probeGcMs: number }> = {};
  let offset = 0;
  for (let r = 0; r < RATE_ROUNDS; r++) {
    // Each path gets distinct transactions in every round (the same ones as the other paths).
    const warmup = r === 0 ? RATE_FIRST_WARMUP : RATE_WARMUP;
    const count = Math.ceil(RATE * (perRound + warmup));
    const bodies = validBodies.slice(offset, offset + count);
    offset += count;
    for (const [name, url, headers] of paths) {
      const out = join(dir, `rate-${name}-${r}.json`);
      const input = join(dir, `rate-${name}-${r}-input.json`);
      writeFileSync(input, JSON.stringify({ url, bodies, headers, rate: RATE, seconds: perRound, warmup, connections: opt['rate-connections'], out }));
      const p = spawnSync('taskset', ['-c', LOAD_CORES, 'node', driver('rate-probe'), input], { encoding: 'utf8' });
      const m = /RESULT (\{.*\})/.exec(p.stdout ?? '');
      if (m === null) throw new Error(`rate probe (${name}) failed: ${p.stdout}${p.stderr}`);
      const res = JSON.parse(m[1]!) as { non200: number; unanswered: number; maxQueued: number; probeGcMs: number };
      const st = (stats[name] ??= { non200: 0, unanswered: 0, maxQueued: 0, probeGcMs: 0 });
      st.non200 += res.non200;
      st.unanswered += res.unanswered;
      st.maxQueued = Math.max(st.maxQueued, res.maxQueued);
      st.probeGcMs = round(st.probeGcMs + res.probeGcMs, 1);
      for (const [at, us] of JSON.parse(readFileSync(out, 'utf8')) as [number, number][]) samples[name]!.push({ at, us });
    }
  }
  // txgate's threads write their GC pauses as they end.
  for (const g of Object.values(gates)) await stop(g.child);
  await stop(near);
  const pct = (xs: number[], p: number) => Math.round(xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!);
  const pcts = (name: string) => {
    const xs = samples[name]!.map((s) => s.us).sort((a, b) => a - b);
    return { p50: pct(xs, 50), p99: pct(xs, 99), p999: pct(xs, 99.9), n: xs.length };
  };
  const direct = { path: 'direct', ...pcts('direct'), ...stats.direct! };
  const rows: Record<string, unknown>[] = [direct];
  say(
    '| path | p50 / p99 / p99.9 µs | **added p50 / p99 / p99.9 µs** | added p99 / added p50 | samples (non-200, unanswered) | GC pauses in txgate: minor / major (longest ms) | p99.9 requests in flight during a GC: any / major | requests during a major GC | reloads |',
  );
  say('|---|---|---|---|---|---|---|---|---|');
  say(
    `| direct (client → stub) | ${direct.p50} / ${direct.p99} / ${direct.p999} | — | — | ${direct.n} (${direct.non200}, ${direct.unanswered}) | — | — | — | — |`,
  );
  const tails: string[] = [];
  for (const name of ['http', 'ws'] as const) {
    const p = pcts(name);
    const added = { p50: p.p50 - direct.p50, p99: p.p99 - direct.p99, p999: p.p999 - direct.p999 };
    const gc = gcAgainst(readGc(gcFile[name]), samples[name]!, p.p999);
    // Reloads (the account store, the configuration) logged while the probe ran.
    const reloads = readFileSync(gates[name].log, 'utf8')
      .split('\n')
      .filter((l) => /reload/i.test(l)).length;
    // A ratio of an added figure below zero (the reference's own noise) is no figure either.
    const ratio = added.p50 > 0 && added.p99 >= 0 ? round(added.p99 / added.p50, 2) : null;
    rows.push({ path: name, ...p, ...stats[name]!, added, addedP99OverP50: ratio, reloads, gc });
    const label = name === 'http' ? 'client → txgate → stub over HTTP' : 'client → txgate → stub over ws://';
    say(
      `| ${label} | ${p.p50} / ${p.p99} / ${p.p999} | **${flagged(added.p50)} / ${flagged(added.p99)} / ${flagged(added.p999)}** | ${ratio === null ? '—' : `${ratio}x`} | ${p.n} (${stats[name]!.non200}, ${stats[name]!.unanswered}) | ${gc.minor} / ${gc.major} (${gc.longestMinorMs} / ${gc.longestMajorMs}) | ${gc.tailOverlappingGc} / ${gc.tailOverlappingMajor} of ${gc.tailRequests} | ${gc.requestsOverlappingMajor} | ${reloads} |`,
    );
    tails.push(
      `- over ${name === 'http' ? 'HTTP' : 'ws://'}: ` +
        gc.tail
          .map(
            (t) =>
              `${t.us} µs` +
              (t.gc.length === 0
                ? ''
                : ` (${t.gc.map((g) => `${g.kind} GC ${g.ms} ms at ${g.startOffsetMs >= 0 ? '+' : ''}${g.startOffsetMs} ms`).join(', ')})`),
          )
          .join('; '),
    );
  }
  say(`\nThe p99.9 requests (slowest first), with the GC pauses in txgate that ran while each was in flight (offset from when it was due):\n`);
  for (const t of tails) say(t);
  report.rate = {
    rate: RATE,
    secondsPerPath: opt['rate-seconds'],
    warmupSeconds: RATE_WARMUP,
    firstWarmupSeconds: RATE_FIRST_WARMUP,
    connections: opt['rate-connections'],
    rounds: RATE_ROUNDS,
    rows,
  };
}

if (want('client')) {
  say('\n## Upstream client alone (CPU µs per call to the stub, client on core ' + SERVER_CORES + ')\n');
  const runClient = (i: number) => spawnSync('taskset', ['-c', SERVER_CORES, 'node', driver('upstream-client'), '18200', String(i)], { encoding: 'utf8' });
  const rows: Record<string, Record<string, number>> = {};
  // One fresh process per client (see upstream-client.ts), until one past the last answers {}.
  for (let i = 0; ; i++) {
    const r = runClient(i);
    const m = /RESULT (\{.*\})/.exec(r.stdout ?? '');
    if (m === null) throw new Error(`upstream client bench #${i} failed (status ${r.status}, signal ${r.signal}): ${r.stdout}${r.stderr}`);
    const one = JSON.parse(m[1]!) as Record<string, Record<string, number>>;
    if (Object.keys(one).length === 0) break;
    Object.assign(rows, one);
  }
  report.client = rows;
  say('| client | CPU µs/call, 1 at a time | calls/s | CPU µs/call, 16 at a time | calls/s |');
  say('|---|---|---|---|---|');
  for (const [name, v] of Object.entries(rows)) say(`| ${name} | ${v.cpuUs_c1} | ${v.callsPerSec_c1} | ${v.cpuUs_c16} | ${v.callsPerSec_c16} |`);
}

if (want('metrics')) {
  say('\n## Metrics on vs off\n');
  // Both fresh: the main txgate has served every scenario above by now (heap, JIT state, log
  // volume), which alone made "on" look slower than a newly started "off".
  const onGate = await startTxgate({ sequencer: 'http://127.0.0.1:18200', metrics: true });
  const off = await startTxgate({ sequencer: 'http://127.0.0.1:18200', metrics: false });
  say('| scenario | metrics on req/s (median of 5) | metrics off req/s (median of 5) | on / off | CPU µs/req on / off |');
  say('|---|---|---|---|---|');
  const rows = [];
  // Alternate five rounds and take the medians: the difference sought is smaller than the noise of one run.
  for (const name of ['eth_chainId', 'valid submission'] as const) {
    const on: number[] = [];
    const offs: number[] = [];
    const cpuOn: number[] = [];
    const cpuOff: number[] = [];
    for (let round = 0; round < 5; round++) {
      // Which one goes first alternates too.
      const first = round % 2 === 0;
      const y0 = first ? null : await measure(off.child.pid!, off.url, scenarios[name]);
      const x = await measure(onGate.child.pid!, onGate.url, scenarios[name]);
      const y = y0 ?? (await measure(off.child.pid!, off.url, scenarios[name]));
      on.push(x.rps);
      offs.push(y.rps);
      cpuOn.push(x.cpuUsPerReq);
      cpuOff.push(y.cpuUsPerReq);
    }
    const a = median(on);
    const b = median(offs);
    const ca = median(cpuOn);
    const cb = median(cpuOff);
    rows.push({ scenario: name, on: a, off: b, ratio: round(a / b, 3), cpuOn: ca, cpuOff: cb, rounds: { on, off: offs } });
    say(`| ${name} | ${a} | ${b} | ${round(a / b, 3)}x | ${ca} / ${cb} |`);
  }
  report.metrics = rows;
  await stop(onGate.child);
  await stop(off.child);
}

if (want('workers') && cores >= 2) {
  say('\n## 1 vs 2 worker threads (wrk shares the 2 cores with the server: read with care)\n');
  const two = await startTxgate({ sequencer: 'http://127.0.0.1:18200', workers: 2 });
  say('| scenario | 1 thread req/s | 2 threads req/s | 2 / 1 |');
  say('|---|---|---|---|');
  const rows = [];
  for (const name of ['eth_chainId', 'valid submission'] as const) {
    const a = await measure(gate.child.pid!, gate.url, scenarios[name]);
    const b = await measure(two.child.pid!, two.url, scenarios[name]);
    rows.push({ scenario: name, one: a.rps, two: b.rps, ratio: round(b.rps / a.rps, 3) });
    say(`| ${name} | ${a.rps} | ${b.rps} | ${round(b.rps / a.rps, 3)}x |`);
  }
  report.workers = rows;
  await stop(two.child);
}

if (want('sync')) {
  // The sync send against the plain send on the same txgate (forward mode), and the receipt
  // mode (the plain send, then eth_getTransactionReceipt) on a second one; the stub includes
  // every transaction at once, so this is the sync path's own cost, not a chain's wait.
  say(
    `\n## The sync send beside the plain send (stub answering with the receipt at once; ${DURATION} s each, alternating ${ROUNDS} times: the ${medianName(ROUNDS)}, each against the plain send of the same round)\n`,
  );
  const fwd = await startTxgate({ sequencer: 'http://127.0.0.1:18200', sync: 'forward' });
  const rcp = await startTxgate({ sequencer: 'http://127.0.0.1:18200', sync: 'receipt' });
  const runs: { plain: Measured; sync: Measured; receipt: Measured }[] = [];
  for (let i = 0; i < ROUNDS; i++)
    runs.push({
      plain: await measure(fwd.child.pid!, fwd.url, syncScripts.plain, DURATION, CONNS, i === 0),
      sync: await measure(fwd.child.pid!, fwd.url, syncScripts.sync, DURATION, CONNS, i === 0),
      receipt: await measure(rcp.child.pid!, rcp.url, syncScripts.sync, DURATION, CONNS, i === 0),
    });
  say(
    `| scenario | req/s | plain send req/s, the same round | / plain send (${medianName(ROUNDS)}) | all rounds | p50 / p99 / p99.9 µs | CPU µs/req | CPU / plain send, the same round | non-2xx |`,
  );
  say('|---|---|---|---|---|---|---|---|---|');
  const rows: Record<string, unknown>[] = [];
  const plainRps = median(runs.map((r) => r.plain.rps));
  say(
    `| plain send (eth_sendRawTransaction): the reference | ${plainRps} (median of its ${ROUNDS} rounds: ${runs.map((r) => r.plain.rps).join(', ')}) | — | 1 (reference) | — | — | ${median(runs.map((r) => r.plain.cpuUsPerReq))} | 1 (reference) | ${runs.reduce((n, r) => n + r.plain.non2xx, 0)} |`,
  );
  rows.push({ scenario: 'plain send (eth_sendRawTransaction)', reference: true, rps: runs.map((r) => r.plain.rps), medianRps: plainRps });
  for (const [name, pick] of [
    ['sync send, forward mode', (r: (typeof runs)[number]) => r.sync],
    ['sync send, receipt mode (send, then one receipt read)', (r: (typeof runs)[number]) => r.receipt],
  ] as const) {
    // Each round's ratio is against the plain send of that same round; the median round's
    // figures are shown together, its plain send beside them.
    const ratios = runs.map((r) => round(pick(r).rps / r.plain.rps, 3));
    const mid = medianBy(runs, (r) => pick(r).rps / r.plain.rps);
    const m = pick(mid);
    const ratio = round(m.rps / mid.plain.rps, 3);
    const cpu = round(m.cpuUsPerReq / mid.plain.cpuUsPerReq, 2);
    const noise = round(roundsSpread(ratios), 3);
    rows.push({ scenario: name, measured: m, plain: mid.plain, ratio, ratios, spread: noise, cpuRatio: cpu });
    say(
      `| ${name} | ${m.rps} | ${mid.plain.rps} | ${ratio}x${noisyNote(noise)} | ${spread(ratios)} | ${m.p50} / ${m.p99} / ${m.p999} | ${m.cpuUsPerReq} | ${cpu}x | ${m.non2xx} |`,
    );
  }
  report.sync = rows;
  await stop(fwd.child);
  await stop(rcp.child);
}

await stop(gate.child);

if (want('soak') && opt.soak > 0) {
  const seconds = opt.soak;
  say(`\n## Saturation (${seconds} s after a 20-s saturated warm-up, 512 connections, stub answering after 50 ms, maxInFlight 256)\n`);
  const slow = await start(['node', server('stub-sequencer'), '18201', '50'], LOAD_CORES, 'slow stub');
  const g = await startTxgate({ sequencer: 'http://127.0.0.1:18201', maxInFlight: 256 });
  const pid = g.child.pid!;
  const rss: number[] = [];
  const sampler = setInterval(() => rss.push(rssMB(pid)), 1000);
  // Warm up saturated first: V8 grows its heap to a steady state under load; what must not
  // happen is growth after that (a leak).
  await wrk(g.url, scenarios['valid submission'], 20, 512);
  const rss0 = rssMB(pid);
  const r = await wrk(g.url, scenarios['valid submission'], seconds, 512);
  clearInterval(sampler);
  const rss1 = rssMB(pid);
  const ok = r.requests - r.non2xx;
  const soak = {
    requests: r.requests,
    accepted: ok,
    overloaded503: r.non2xx,
    rps: Math.round(r.requests / (r.duration_us / 1e6)),
    p50: r.p50,
    p99: r.p99,
    rssStartMB: round(rss0, 1),
    rssEndMB: round(rss1, 1),
    rssMaxMB: round(Math.max(...rss), 1),
    growthMB: round(rss1 - rss0, 1),
  };
  report.soak = soak;
  say('| requests | accepted (≤ 256 in flight, 50 ms each) | 503 overloaded | p50 / p99 µs | RSS start → end (max) MB | growth MB |');
  say('|---|---|---|---|---|---|');
  say(
    `| ${soak.requests} | ${soak.accepted} | ${soak.overloaded503} | ${soak.p50} / ${soak.p99} | ${soak.rssStartMB} → ${soak.rssEndMB} (${soak.rssMaxMB}) | ${soak.growthMB} |`,
  );
  await stop(g.child);
  await stop(slow);
}

await stop(echo);
await stop(floor);
await stop(stub);
// The picture: latency percentiles of each throughput scenario, txgate against the echo (and
// the floor) in the same round; each bar runs to p99.9, split at p50 and p99.
if (Array.isArray(report.throughput) && report.throughput.length > 0) {
  const bars: Bar[] = [];
  const bar = (label: string, m: Measured): Bar => ({
    label,
    segments: [
      { label: '0 → p50', value: m.p50 },
      { label: 'p50 → p99', value: Math.max(0, m.p99 - m.p50) },
      { label: 'p99 → p99.9', value: Math.max(0, m.p999 - m.p99) },
    ],
    note: `${m.p50} / ${m.p99} / ${m.p999} µs`,
  });
  for (const r of report.throughput as { scenario: string; txgate: Measured; echo: Measured; floor?: Measured }[]) {
    bars.push(bar(`${r.scenario}: echo`, r.echo));
    if (r.floor !== undefined) bars.push(bar(`${r.scenario}: floor`, r.floor));
    bars.push(bar(`${r.scenario}: txgate`, r.txgate));
  }
  run.write(
    'load.svg',
    stackedBarsSvg({
      title: `Latency under wrk -c${CONNS} (the ${medianName(ROUNDS)}, ${DURATION} s each; ${new Date().toISOString().slice(0, 10)})`,
      unit: 'latency, µs (p50 / p99 / p99.9)',
      bars,
      format: (v) => `${Math.round(v)}`,
    }),
  );
  lines.push('', '![latency percentiles](load.svg)');
}
const differs = differsFrom(
  RESULTS_DIR,
  'load.json',
  { duration: DURATION, rounds: ROUNDS, connections: CONNS, logLevel: opt['log-level'] ?? 'info' },
  (doc, k) => (k === 'rounds' ? (doc.rounds ?? (doc.throughput as { ratios?: unknown[] }[] | undefined)?.[0]?.ratios?.length) : doc[k]),
);
if (differs !== '' && run.outDir !== RESULTS_DIR) say(`\n${differs}`);
const mdPath = run.write('load.md', lines.join('\n') + '\n');
run.write('load.json', JSON.stringify(report, null, 2) + '\n');
process.stdout.write(`\nwritten to ${mdPath}, load.json and load.svg\n`);
process.exit(0);
