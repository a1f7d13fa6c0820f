/**
 * `npm run bench:instr`: instructions per request, counted by valgrind's callgrind, the primary
 * performance figure of this project. Instruction counts repeat within 1–2% whatever else the
 * host does, where req/s on a shared machine swings ±30%.
 *
 * Each server runs under callgrind in its own process (node --single-threaded, so compiler and
 * GC threads do not make tier-up depend on time): the bare uWS echo, the conforming floor
 * (floor-server.ts) and txgate from its CLI with a config (one thread, dedup off, metrics on,
 * logs at info to a pipe this bench drains). The stub sequencer runs outside, uninstrumented.
 * For every scenario: `--warmup` rounds of `--requests` requests (8 connections, one request in
 * flight on each), then `--rounds` measured ones, each between `callgrind_control -z` and `-d`.
 * Printed per scenario: the median instructions per request and the spread of the rounds, GC
 * instructions per request (v8::internal::Heap::CollectGarbage, inclusive), bytes allocated per
 * request and collections per 10,000 requests (--trace-gc-nvp), each as a ratio to the echo and
 * txgate beside the floor. The WebSocket lane's scenarios (txgate only) send the same requests
 * as frames on one connection with as many in flight as the HTTP scenarios have connections. Then txgate per stage: requests that exit at consecutive stages,
 * each stage's cost the difference to the exit before it.
 *
 * Needs valgrind (Debian: apt-get install -y valgrind); installs nothing. Loopback only.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import WebSocket from 'ws';
import { privateKeyToAddress } from 'viem/accounts';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { sign1559 } from '../../src/dev/sign.js';
import { initCrypto } from '../../src/native.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { topFunctions, type TopFunction } from '../shared/callgrind-top.js';
import { median, RESULTS_DIR, round, startBench } from '../shared/lib.js';
import { barNote, differsFrom, medianName, roundsProblem } from '../shared/figures.js';
import { stackedBarsSvg, type Bar } from '../shared/svg.js';
import { noisyRounds, pairedConfidence, spread, stageCosts, type StageCost } from '../shared/stage-costs.js';
import { TXGATE_CLI, server } from '../shared/paths.js';

// --- fixtures -------------------------------------------------------------------------------
await initCrypto();
const keys = {
  load: 'txg_instr_' + randomBytes(24).toString('base64url'),
  listed: 'txg_instr_listed_' + randomBytes(24).toString('base64url'),
  otherChain: 'txg_instr_other_' + randomBytes(24).toString('base64url'),
  limited: 'txg_instr_limited_' + randomBytes(24).toString('base64url'),
  sync: 'txg_instr_sync_' + randomBytes(24).toString('base64url'),
};
const senders = Array.from({ length: 16 }, () => '0x' + randomBytes(32).toString('hex'));
const outsider = '0x' + randomBytes(32).toString('hex');
const MIN_TIP = 1_000_000_000_000n;
const tx = (i: number, o: { value?: bigint; to?: string; key?: string; chainId?: number } = {}) =>
  sign1559(
    {
      chainId: o.chainId ?? 4663,
      nonce: Math.floor(i / senders.length),
      maxPriorityFeePerGas: 1_000_000_000n,
      maxFeePerGas: 3_000_000_000n,
      gas: 21000n,
      to: o.to ?? ANVIL_TIP_ADDRESS,
      value: o.value ?? MIN_TIP,
    },
    o.key ?? senders[i % senders.length]!,
  );
const rpc = (method: string, params: unknown[], id: number | string = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
/** The sync send: chain 4663 in forward mode; RECEIPT_CHAIN (its own host) in receipt mode, the stub its chain RPC too. */
const RECEIPT_CHAIN = 4664;
const RECEIPT_HOST = 'receipt.localhost';
/** The same plain send to a sequencer over a persistent WebSocket (ws://): WS_CHAIN, its own host and stub. */
const WS_CHAIN = 4665;
const WS_HOST = 'ws-sequencer.localhost';
/** The same plain send on a chain that tracks its accepted transactions (`chains[].track`): TRACK_CHAIN, its own host and stub. */
const TRACK_CHAIN = 4666;
const TRACK_HOST = 'tracked.localhost';
const grant = { chainId: 4663, rateLimit: { perSecond: 1e6, burst: 1e6 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: MIN_TIP.toString() };
const POOL = 512;
const valid = Array.from({ length: POOL }, (_, i) => rpc('eth_sendRawTransaction', [tx(i)], i));
const syncValid = Array.from({ length: POOL }, (_, i) => rpc('eth_sendRawTransactionSync', [tx(i)], i));
const validWs = Array.from({ length: POOL }, (_, i) => rpc('eth_sendRawTransaction', [tx(i, { chainId: WS_CHAIN })], i));
// Every tracked submission is a new transaction (a repeated hash is tracked once): a pool as long as a run's requests.
const TRACKED_POOL = 8192;
const validTracked = Array.from({ length: TRACKED_POOL }, (_, i) => rpc('eth_sendRawTransaction', [tx(i, { chainId: TRACK_CHAIN })], i));
const syncReceipt = Array.from({ length: POOL }, (_, i) => rpc('eth_sendRawTransactionSync', [tx(i, { chainId: RECEIPT_CHAIN })], i));

interface Scenario {
  readonly name: string;
  /** The status every measured answer must have (a scenario that measures something else is an error). */
  readonly status: number;
  readonly bodies: readonly string[];
  readonly headers: Record<string, string>;
  readonly host?: string;
  /**
   * Over the WebSocket lane: one connection (authenticated at its upgrade with the scenario's
   * key, opened once before the warm-up) with `--connections` frames in flight, in place of that
   * many HTTP connections with one request each. An answer's status is its data.status (200 for
   * a result).
   */
  readonly ws?: true;
}
const JSON_CT = { 'content-type': 'application/json' };
const sub = (key: string, bodies: readonly string[]): Pick<Scenario, 'bodies' | 'headers'> => ({ bodies, headers: { ...JSON_CT, 'x-api-key': key } });
const untipped = [rpc('eth_sendRawTransaction', [tx(0, { value: 0n, to: '0x3333333333333333333333333333333333333333' })])];

/** The main scenarios (echo: its one answer; floor: the contract's; txgate: all). */
const MAIN: Scenario[] = [
  { name: 'eth_chainId', status: 200, bodies: [rpc('eth_chainId', [])], headers: JSON_CT },
  { name: '401 unauthorized', status: 401, ...sub('txg_wrong_key_0000000000000000000000000000000', [valid[0]!]) },
  { name: '402 fee_rejected', status: 402, ...sub(keys.load, untipped) },
  { name: 'valid submission', status: 200, ...sub(keys.load, valid) },
  { name: 'valid submission, sender-listed grant', status: 200, ...sub(keys.listed, valid) },
  // The same submission forwarded to a ws:// sequencer (frames on persistent connections, no HTTP head either way).
  { name: 'valid submission to a WebSocket sequencer', status: 200, host: WS_HOST, ...sub(keys.load, validWs) },
  // The same submission where the chain tracks it: the acceptance's entry in the status table on top.
  { name: 'valid submission, tracked chain', status: 200, host: TRACK_HOST, ...sub(keys.load, validTracked) },
  // The stub answers with the receipt at once: the sync path's own cost.
  { name: 'sync submission', status: 200, ...sub(keys.sync, syncValid) },
  { name: 'sync submission (receipt mode)', status: 200, host: RECEIPT_HOST, ...sub(keys.sync, syncReceipt) },
  { name: 'eth_chainId over WebSocket', status: 200, ws: true, ...sub(keys.load, [rpc('eth_chainId', [])]) },
  { name: 'valid submission over WebSocket', status: 200, ws: true, ...sub(keys.load, valid) },
];
const FLOOR = new Set(['eth_chainId', '401 unauthorized', '402 fee_rejected', 'valid submission']);

/** txgate's requests that exit at each stage, in the pipeline's order (the last one forwards). */
const STAGES: (Scenario & { stage: string; same?: string })[] = [
  // No body: a refusal before the body is read closes its connection, which would be measured too.
  { stage: 'host', name: 'exit at host (421, no body)', status: 421, host: 'unknown.example', bodies: [''], headers: JSON_CT },
  // Valid JSON refused by the envelope check: the parse stage's whole work (a body that is not
  // JSON costs its SyntaxError on top, a cost no passing request pays).
  {
    stage: 'size_cap + parse',
    name: 'exit at parse (400 invalid_request)',
    status: 400,
    bodies: ['{"jsonrpc":"1.0","id":1,"method":"eth_chainId"}'],
    headers: JSON_CT,
  },
  { stage: 'route', name: 'exit at route (400 method_not_found)', status: 400, bodies: [rpc('eth_getBalance', [])], headers: JSON_CT },
  { stage: 'auth', name: 'exit at auth (401)', same: '401 unauthorized', status: 401, ...sub('txg_wrong_key_0000000000000000000000000000000', [valid[0]!]) },
  { stage: 'grant', name: 'exit at grant (403 chain_not_granted)', status: 403, ...sub(keys.otherChain, [valid[0]!]) },
  { stage: 'decode', name: 'exit at decode (400 invalid_transaction)', status: 400, ...sub(keys.load, [rpc('eth_sendRawTransaction', ['0x02c3010203'])]) },
  { stage: 'fee', name: 'exit at fee (402)', same: '402 fee_rejected', status: 402, ...sub(keys.load, untipped) },
  { stage: 'rate_limit', name: 'exit at rate_limit (429)', status: 429, ...sub(keys.limited, valid) },
  { stage: 'forward', name: 'forwarded (200)', same: 'valid submission', status: 200, ...sub(keys.load, valid) },
];
/** The sender stage recovers the sender only for a grant with an allow-list: measured apart, over the fee exit. */
const SENDER: Scenario = {
  name: 'exit at sender, listed grant (403 sender_not_allowed)',
  status: 403,
  ...sub(keys.listed, [rpc('eth_sendRawTransaction', [tx(0, { key: outsider })])]),
};

const ALL_SCENARIOS = [...MAIN.map((s) => s.name)];
const run = startBench('bench:instr', 'Instructions per request under callgrind: the bare uWS echo, the conforming floor and txgate, then txgate per stage.', {
  requests: { kind: 'int', quick: 400, full: 2000, help: 'requests per round' },
  warmup: { kind: 'int', quick: 6, full: 3, help: 'unmeasured rounds per scenario, uninstrumented (the first answers of a cold server may be 503s)' },
  rounds: { kind: 'int', quick: 3, full: 5, help: 'measured rounds per scenario, an odd number ≥ 3 (their median is the figure)' },
  connections: { kind: 'int', quick: 8, help: 'connections, one request in flight on each' },
  scenarios: {
    kind: 'list',
    choices: ALL_SCENARIOS,
    quick: ['valid submission'],
    help: 'the main scenarios measured (the echo answers eth_chainId alone, the floor four of them)',
  },
  'no-stages': { kind: 'flag', help: "skip txgate's per-stage table" },
  'express-lane': {
    kind: 'flag',
    help: "chain 4663 enables the express lane (the stub serves its auction, a round nobody holds, and its endpoint) and the load account's grant has it: a plain submission's cost with the lane configured but not in control",
  },
  'express-lane-held': {
    kind: 'flag',
    help: "as --express-lane, but the stub's auction names txgate's controller for the round: every valid submission is wrapped (the endpoint answers null, the lookup finds the hash)",
  },
  'max-spread': {
    kind: 'number',
    min: 0.1,
    quick: 10,
    full: 5,
    help: "bound on a scenario's rounds' spread, % of their median: rounds beyond it are measured again",
  },
  retries: { kind: 'int', min: 0, quick: 1, full: 2, help: "times a scenario's noisy rounds are measured again" },
  keep: { kind: 'text', arg: 'DIR', help: 'keep every callgrind dump in DIR (for callgrind_annotate)' },
  top: {
    kind: 'int',
    min: 0,
    quick: 0,
    help: 'functions listed per scenario of the floor and txgate (self instructions per request in the median round); node then runs with --perf-basic-prof to name JIT code, whose map logging adds work to every GC: a run with --top profiles, its totals are not the figures',
  },
  idle: {
    kind: 'number',
    min: 0,
    quick: 10,
    help: "seconds each server is measured idle after its warm-up: its timers' and background work's instructions per second, which every round also counts by its wall time (0: not measured)",
  },
  'port-base': {
    kind: 'int',
    min: 1024,
    quick: 18150,
    help: 'first of the loopback ports used (the servers PORT..PORT+3, the stubs PORT+100..PORT+102): two runs at once need bases 200 apart',
  },
});
const opt = run.opt;
const dir = run.tmp;
const children = run.children;
for (const tool of ['valgrind', 'callgrind_control', 'callgrind_annotate'])
  if (spawnSync('which', [tool]).status !== 0) {
    process.stderr.write(`bench:instr: ${tool} is not installed: it needs valgrind's callgrind (Debian: apt-get install -y valgrind)\n`);
    process.exit(1);
  }
const KEEP = opt.keep === undefined ? undefined : run.userPath(opt.keep);
if (KEEP !== undefined) mkdirSync(KEEP, { recursive: true });
const N = opt.requests;
const WARMUP = opt.warmup;
const ROUNDS = opt.rounds;
if (roundsProblem(ROUNDS) !== null) {
  process.stderr.write(`bench:instr: ${roundsProblem(ROUNDS)} (npm run bench:instr -- --help lists the options)\n`);
  process.exit(2);
}
const CONNS = opt.connections;
const MAX_SPREAD = opt['max-spread'] / 100;
const TOP = opt.top;
const IDLE_S = opt.idle;
const LANE = opt['express-lane'] || opt['express-lane-held'];
/** The controller key txgate holds with --express-lane (a bench key), and what the stub's auction names. */
const LANE_KEY = `0x${'42'.repeat(32)}` as const;
const LANE_HOLDER = opt['express-lane-held'] ? privateKeyToAddress(LANE_KEY).toLowerCase() : '-';
writeFileSync(
  join(dir, 'accounts.json'),
  JSON.stringify({
    accounts: [
      {
        id: 'load',
        keySha256: [keySha256(keys.load)],
        grants: [
          { ...grant, ...(LANE ? { expressLane: true } : {}) },
          { ...grant, chainId: WS_CHAIN },
          { ...grant, chainId: TRACK_CHAIN },
        ],
      },
      { id: 'listed', keySha256: [keySha256(keys.listed)], grants: [{ ...grant, senders: senders.map((k) => privateKeyToAddress(k as `0x${string}`)) }] },
      { id: 'other-chain', keySha256: [keySha256(keys.otherChain)], grants: [{ ...grant, chainId: 10 }] },
      { id: 'limited', keySha256: [keySha256(keys.limited)], grants: [{ ...grant, rateLimit: { perSecond: 1e-9, burst: 1 } }] },
      { id: 'sync', keySha256: [keySha256(keys.sync)], grants: [grant, { ...grant, chainId: RECEIPT_CHAIN }].map((g) => ({ ...g, sync: true })) },
    ],
  }),
);

function requestText(s: Scenario, i: number): string {
  const body = s.bodies[i % s.bodies.length]!;
  let h = `POST / HTTP/1.1\r\nHost: ${s.host ?? 'localhost'}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  for (const [k, v] of Object.entries(s.headers)) h += `${k}: ${v}\r\n`;
  return h + '\r\n' + body;
}

// --- the load: CONNS keep-alive connections, one request in flight on each ------------------
/** Where each long-pool scenario's next round starts. */
const cursor = new Map<string, number>();
/**
 * Sends `n` requests of `s`; resolves with the count of answers by status. A connection the
 * server closes is replaced (a request in flight on it is not counted: only answers are).
 */
function load(port: number, s: Scenario, n: number): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  // A pool longer than the common one (the tracked chain's) goes on where the last round stopped: every request new.
  let next = s.bodies.length > POOL ? (cursor.get(s.name) ?? 0) : 0;
  if (s.bodies.length > POOL) cursor.set(s.name, next + n);
  n += next;
  const connection = () =>
    new Promise<void>((resolve, reject) => {
      const sock = connect(port, '127.0.0.1');
      sock.setNoDelay(true);
      let buf: Buffer = Buffer.alloc(0);
      const send = () => {
        if (next >= n) return void sock.end();
        sock.write(requestText(s, next++));
      };
      sock.on('connect', send);
      sock.on('data', (d: Buffer) => {
        buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
        for (;;) {
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          const head = buf.subarray(0, end).toString('latin1');
          const len = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
          if (buf.length < end + 4 + len) return;
          const status = Number(head.slice(9, 12));
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          buf = buf.subarray(end + 4 + len);
          send();
        }
      });
      sock.on('close', () => resolve());
      sock.on('error', reject);
    });
  const one = async () => {
    while (next < n) await connection();
  };
  return Promise.all(Array.from({ length: CONNS }, one)).then(() => statuses);
}

/** The WebSocket connections of the ws scenarios, by scenario: opened once, kept across rounds. */
const lanes = new Map<string, WebSocket>();

async function lane(port: number, s: Scenario): Promise<WebSocket> {
  const open = lanes.get(s.name);
  if (open !== undefined && open.readyState === WebSocket.OPEN) return open;
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, {
    headers: { host: s.host ?? 'localhost', 'x-api-key': s.headers['x-api-key'] ?? '' },
    perMessageDeflate: false,
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('unexpected-response', (_q, r) => reject(new Error(`${s.name}: the upgrade was refused ${r.statusCode}`)));
    ws.once('error', reject);
  });
  lanes.set(s.name, ws);
  return ws;
}

/** Sends `n` frames of `s` on its connection, CONNS in flight; resolves with the count of answers by data.status. */
async function loadWs(port: number, s: Scenario, n: number): Promise<Map<number, number>> {
  const ws = await lane(port, s);
  const statuses = new Map<number, number>();
  let sent = 0;
  let got = 0;
  return new Promise((resolve, reject) => {
    const send = () => {
      if (sent < n) ws.send(s.bodies[sent++ % s.bodies.length]!);
    };
    const onMessage = (d: Buffer) => {
      const a = JSON.parse(d.toString()) as { error?: { data?: { status?: number } } };
      const status = a.error === undefined ? 200 : (a.error.data?.status ?? 0);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (++got < n) return send();
      ws.off('message', onMessage);
      ws.off('close', onClose);
      resolve(statuses);
    };
    const onClose = (code: number) => reject(new Error(`${s.name}: the connection closed (${code}) after ${got} of ${n} answers`));
    ws.on('message', onMessage);
    ws.once('close', onClose);
    for (let i = 0; i < CONNS; i++) send();
  });
}

/** A round's requests over the scenario's transport. */
const drive = (port: number, s: Scenario, n: number) => (s.ws ? loadWs(port, s, n) : load(port, s, n));

/** Answers counted in a round. */
const answered = (statuses: Map<number, number>) => [...statuses.values()].reduce((a, b) => a + b, 0);

// --- servers under callgrind ----------------------------------------------------------------
interface Server {
  readonly name: string;
  readonly child: ChildProcess;
  readonly port: number;
  /** --trace-gc-nvp lines seen so far. */
  readonly gc: string[];
}

// Instrumentation off until the measured rounds (callgrind_control --instr=on after the
// warm-up): node's start and the warm-up run several times faster uninstrumented.
const VALGRIND = ['--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', '--dump-instr=no', '--collect-jumps=no'];
const NODE = ['--single-threaded', '--trace-gc-nvp'];
/** With --top, JIT code is named from node's perf map (/tmp/perf-PID.map). */
const perfMapOf = (pid: number) => `/tmp/perf-${pid}.map`;

/**
 * Starts a server: under callgrind, or (`plain`) as node alone with a 1-MB young generation, so
 * that scavenges come often enough to count the bytes allocated per request precisely.
 */
async function startServer(name: string, port: number, args: string[], readyPath?: string, plain = false): Promise<Server> {
  const cmd = plain
    ? ['node', '--single-threaded', '--max-semi-space-size=1', '--trace-gc-nvp', ...args]
    : [
        'valgrind',
        ...VALGRIND,
        `--callgrind-out-file=${join(dir, `cg.${name}.%p`)}`,
        'node',
        ...NODE,
        ...(TOP > 0 && name !== 'echo' ? ['--perf-basic-prof'] : []),
        ...args,
      ];
  const child = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const gc: string[] = [];
  let out = '';
  let err = '';
  let rest = '';
  child.stdout!.on('data', (d: Buffer) => {
    const text = rest + d.toString();
    const lines = text.split('\n');
    rest = lines.pop()!;
    for (const l of lines) {
      if (l.includes(' gc=')) gc.push(l);
      else if (out.length < 20_000) out += l + '\n';
    }
  });
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const deadline = Date.now() + 300_000; // node under callgrind starts in tens of seconds
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited under valgrind: ${err}`);
    if (readyPath === undefined ? out.includes('ready') : await httpOk(port, readyPath)) break;
    if (Date.now() > deadline) throw new Error(`${name} did not start under valgrind: ${err}`);
    await sleep(500);
  }
  return { name, child, port, gc };
}

async function httpOk(port: number, path: string): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5_000) })).status === 200;
  } catch {
    return false;
  }
}

let kept = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function control(flag: '-z' | '-d' | '--instr=on', pid: number): void {
  const r = spawnSync('callgrind_control', [flag, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${flag} ${pid}: ${r.stderr}`);
}

/**
 * The newest dump of `pid`: total instructions, GC's share (inclusive), and the JIT's: TurboFan
 * compiling a function that tiered up (V8's Runtime_CompileOptimized, inclusive; with node
 * --single-threaded it runs on the main thread, inside whichever round the function got hot in).
 */
function readDump(server: Server, requests: number): { ir: number; gcIr: number; jitIr: number; top?: readonly TopFunction[] } {
  const pid = server.child.pid!;
  const prefix = `cg.${server.name}.${pid}.`;
  const files = readdirSync(dir)
    .filter((f) => f.startsWith(prefix))
    .sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)));
  const file = join(dir, files.at(-1)!);
  const text = readFileSync(file, 'utf8');
  const ir = Number(/^totals: (\d+)/m.exec(text)?.[1] ?? /^summary: (\d+)/m.exec(text)?.[1]);
  const annotated = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 64 << 20 }).stdout;
  const gcLine = annotated.split('\n').find((l) => l.includes('v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace'));
  const gcIr = gcLine === undefined ? 0 : Number(gcLine.trim().split(' ')[0]!.replace(/,/g, ''));
  const jitIr = annotated
    .split('\n')
    .filter((l) => l.includes('v8::internal::Runtime_CompileOptimized'))
    .reduce((a, l) => a + Number(l.trim().split(' ')[0]!.replace(/,/g, '')), 0);
  const top = TOP > 0 && server.name !== 'echo' ? topFunctions(file, perfMapOf(pid), TOP, requests) : undefined;
  for (const f of files) {
    if (KEEP !== undefined) copyFileSync(join(dir, f), join(KEEP, `${f}.${++kept}`));
    rmSync(join(dir, f));
  }
  return { ir, gcIr, jitIr, ...(top !== undefined ? { top } : {}) };
}

interface Round {
  /** Answers counted, instructions, of which in the garbage collector. */
  readonly n: number;
  readonly perReq: number;
  /** Its wall time (background work, timers among it, is counted by it). */
  readonly seconds: number;
  /** TurboFan's compilations in the round, per request: left out of perReq (a function tiering up is a one-time cost). */
  readonly jitPerReq: number;
  readonly gcIr: number;
  readonly scavenges: number;
  readonly majors: number;
  /** The answers by status when not all had the scenario's (a cold or starved server: 503, 502). */
  readonly unexpected?: string;
  /** With --top: the functions with the most self instructions per request. */
  readonly top?: readonly TopFunction[];
}

/**
 * The GC lines of a round: bytes allocated, scavenges and full collections. The bytes are the
 * heap's growth between collections (this line's total_size_before less the previous line's
 * total_size_after); the lines' own `allocated=` counts from the last full collection.
 */
function gcOf(lines: readonly string[], before?: string): { allocated: number; scavenges: number; majors: number } {
  let allocated = 0;
  let scavenges = 0;
  let majors = 0;
  const size = (l: string | undefined, field: string) => (l === undefined ? undefined : Number(new RegExp(` ${field}=(\\d+)`).exec(l)?.[1]));
  let after = size(before, 'total_size_after');
  for (const l of lines) {
    const b = size(l, 'total_size_before');
    if (after !== undefined && b !== undefined) allocated += b - after;
    after = size(l, 'total_size_after');
    const kind = / gc=(\w+)/.exec(l)?.[1];
    if (kind === 's') scavenges++;
    else if (kind !== undefined) majors++;
  }
  return { allocated, scavenges, majors };
}

interface Measured {
  readonly server: string;
  readonly scenario: string;
  /** Median instructions per request of the measured rounds, and their spread. */
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** (max − min) / median, after any re-measured rounds. */
  readonly spread: number;
  /** Rounds measured again for being beyond the bound (their first figures are dropped). */
  readonly remeasured: number;
  /** GC instructions per request over every measured round (a mean: collections come in spikes). */
  readonly gcPerReq: number;
  readonly scavengesPer10k: number;
  readonly majorsPer10k: number;
  readonly rounds: readonly Round[];
}

/** Each server's instructions per second while idle (its timers and background work), and with --top their functions. */
const idle = new Map<string, { perSecond: number; top?: readonly TopFunction[] }>();

/** Reference scenarios left out of the run, and why. */
const leftOut: string[] = [];

/** One measured round of `s`: N requests between callgrind_control -z and -d. */
async function oneRound(server: Server, s: Scenario): Promise<Round> {
  control('-z', server.child.pid!);
  const gcFrom = server.gc.length;
  const t = performance.now();
  const statuses = await drive(server.port, s, N);
  control('-d', server.child.pid!);
  const seconds = (performance.now() - t) / 1000;
  await sleep(50); // the round's last GC line
  const unexpected = [...statuses].some(([code]) => code !== s.status) ? JSON.stringify(Object.fromEntries(statuses)) : undefined;
  const n = answered(statuses);
  const { ir, gcIr, jitIr, top } = readDump(server, n);
  const g = gcOf(server.gc.slice(gcFrom));
  return {
    n,
    // Without the JIT's compilations: a one-time cost per function, not per request.
    perReq: (ir - jitIr) / n,
    jitPerReq: jitIr / n,
    seconds,
    gcIr,
    scavenges: g.scavenges,
    majors: g.majors,
    ...(unexpected !== undefined ? { unexpected } : {}),
    ...(top !== undefined ? { top } : {}),
  };
}

/**
 * The scenarios of one server: warm-up rounds of each, then ROUNDS measured rounds with the
 * scenarios interleaved round by round (round r of every scenario side by side, which the
 * per-stage differences pair). A scenario whose rounds spread more than MAX_SPREAD has the rounds
 * beyond the band measured again, up to `--retries` times; if it still spreads more, it says so.
 */
async function measureSet(server: Server, scenarios: readonly Scenario[]): Promise<Measured[]> {
  for (const s of scenarios) for (let i = 0; i < WARMUP; i++) await drive(server.port, s, N);
  control('--instr=on', server.child.pid!);
  if (IDLE_S > 0) {
    control('-z', server.child.pid!);
    const t = performance.now();
    await sleep(IDLE_S * 1000);
    control('-d', server.child.pid!);
    const seconds = (performance.now() - t) / 1000;
    const { ir, top } = readDump(server, seconds);
    idle.set(server.name, { perSecond: ir / seconds, ...(top !== undefined ? { top } : {}) });
    process.stdout.write(`${server.name.padEnd(6)} idle: ${k(ir / seconds)} instructions per second (${round(seconds, 1)} s)\n`);
  }
  const rounds = scenarios.map((): Round[] => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, s] of scenarios.entries()) rounds[i]!.push(await oneRound(server, s));
    process.stderr.write(`${server.name}: round ${r + 1}/${ROUNDS} of ${scenarios.length} scenarios\n`);
  }
  // One at a time: a round counts every instruction of the process.
  const out: Measured[] = [];
  for (const [i, s] of scenarios.entries()) {
    const rs = rounds[i]!;
    let remeasured = 0;
    // A round with an answer of another status measured something else: it is measured again
    // too (at least twice), and the run fails if it keeps happening.
    for (let attempt = 0; attempt < Math.max(opt.retries, 2); attempt++) {
      const per = withMeanGc(rs).map((x) => x.perReq);
      const wrong = rs.flatMap((x, j) => (x.unexpected !== undefined ? [j] : []));
      const noisy = attempt < opt.retries ? noisyRounds(per, MAX_SPREAD) : [];
      const again = [...new Set([...wrong, ...noisy])].sort((a, b) => a - b);
      if (again.length === 0) break;
      process.stderr.write(
        `${server.name} / ${s.name}: ${wrong.length > 0 ? `answers not all ${s.status} (${rs[wrong[0]!]!.unexpected})` : `rounds spread ${pct(spread(per))} > ${pct(MAX_SPREAD)}`}: measuring round${again.length > 1 ? 's' : ''} ${again.map((j) => j + 1).join(', ')} again\n`,
      );
      for (const j of again) rs[j] = await oneRound(server, s);
      remeasured += again.length;
    }
    const wrong = rs.find((x) => x.unexpected !== undefined);
    if (wrong !== undefined) {
      const what = `${server.name} / ${s.name}: expected every answer ${s.status}, got ${wrong.unexpected}`;
      // txgate's figures are the point of the run; a reference that misanswers is left out, said.
      if (server.name === 'txgate') throw new Error(what);
      process.stdout.write(`${what} after re-measuring: LEFT OUT of this run\n`);
      leftOut.push(`${server.name} / ${s.name} (answers ${wrong.unexpected})`);
      continue;
    }
    out.push(summarise(server, s, withMeanGc(rs), remeasured));
  }
  return out;
}

/**
 * Each round's count with its collections (Heap::CollectGarbage, inclusive) replaced by the
 * scenario's mean per request: a scavenge lands in whichever round fills the young generation
 * (3-5k per request in a 2,000-request eth_chainId round that holds one, none in the next), so
 * the rounds are compared on their own work, each carrying the same share of the collections.
 */
function withMeanGc(rs: readonly Round[]): Round[] {
  const n = rs.reduce((a, r) => a + r.n, 0);
  const mean = rs.reduce((a, r) => a + r.gcIr, 0) / n;
  return rs.map((r) => ({ ...r, perReq: r.perReq - r.gcIr / r.n + mean }));
}

function summarise(server: Server, s: Scenario, rounds: readonly Round[], remeasured: number): Measured {
  const per = rounds.map((r) => r.perReq);
  const all = rounds.reduce((a, r) => a + r.n, 0);
  const total = (f: 'scavenges' | 'majors' | 'gcIr') => rounds.reduce((a, r) => a + r[f], 0) / all;
  const m: Measured = {
    server: server.name,
    scenario: s.name,
    median: median(per),
    min: Math.min(...per),
    max: Math.max(...per),
    spread: spread(per),
    remeasured,
    gcPerReq: total('gcIr'),
    scavengesPer10k: total('scavenges') * 10_000,
    majorsPer10k: total('majors') * 10_000,
    rounds,
  };
  const noisy =
    m.spread > MAX_SPREAD ? `  NOISY: rounds spread ${pct(m.spread)} > ${pct(MAX_SPREAD)}${remeasured > 0 ? ` after ${remeasured} re-measured` : ''}` : '';
  process.stdout.write(
    `${server.name.padEnd(6)} ${s.name.padEnd(46)} ${k(m.median).padStart(7)} instr/req (rounds ${rounds.map((r) => `${k(r.perReq)}${r.jitPerReq >= 50 ? ` +${k(r.jitPerReq)} JIT` : ''} in ${round(r.seconds, 1)} s`).join(', ')}), GC ${k(m.gcPerReq)}/req${noisy}\n`,
  );
  return m;
}

/**
 * Bytes allocated per request: 20,000 requests after 2,000 to warm up, on a server started
 * plain; counted from the first collection in the round to the last (whole young generations).
 */
async function allocation(server: Server, s: Scenario): Promise<number> {
  await drive(server.port, s, 2_000);
  const from = server.gc.length;
  let answers = 0;
  let at = -1;
  // Requests between the first and the last collection of the round: load in slices of 500.
  for (let i = 0; i < 40; i++) {
    const statuses = await drive(server.port, s, 500);
    await sleep(5);
    if (at < 0 && server.gc.length > from) at = server.gc.length;
    else if (at >= 0) answers += answered(statuses);
  }
  const lines = server.gc.slice(at);
  if (at < 0 || lines.length === 0) return Number.NaN;
  return gcOf(lines, server.gc[at - 1]).allocated / answers;
}

const k = (n: number) => `${round(n / 1000, 1)}k`;
const pct = (x: number) => `${round(x * 100, 1)}%`;
const spreadPct = (m: Measured) => pct(m.spread);

async function stopServer(s: Server): Promise<void> {
  for (const ws of lanes.values()) ws.terminate();
  lanes.clear();
  const done = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await Promise.race([done, sleep(20_000)]);
  s.child.kill('SIGKILL');
}

// --- run ---------------------------------------------------------------------------------------
const want = (name: string) => opt.scenarios === undefined || opt.scenarios.includes(name);
const BASE = opt['port-base'];
const STUB = BASE + 100;
/** The stubs: chain 4663's sequencer, and RECEIPT_CHAIN's sequencer and chain RPC (one port up). */
for (const [port, chainId] of [
  [STUB, 4663],
  [STUB + 1, RECEIPT_CHAIN],
  [STUB + 2, WS_CHAIN],
  [STUB + 3, TRACK_CHAIN],
]) {
  const stub = spawn('node', [server('stub-sequencer'), String(port), '0', String(chainId), LANE_HOLDER], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(stub);
  await new Promise<void>((resolve) => stub.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
}

const results: Measured[] = [];
const started = Date.now();

process.stderr.write(
  `valgrind ${spawnSync('valgrind', ['--version'], { encoding: 'utf8' }).stdout.trim()}, node ${process.version}; ${N} requests a round, ${WARMUP} warm-up + ${ROUNDS} measured rounds, ${CONNS} connections\n`,
);

const SERVERS = {
  echo: { port: BASE, args: [server('echo-server'), String(BASE)], scenarios: [MAIN[0]!] },
  floor: {
    port: BASE + 1,
    args: [
      server('floor-server'),
      String(BASE + 1),
      join(dir, 'floor.log'),
      keySha256(keys.load),
      `http://127.0.0.1:${STUB}`,
      ANVIL_TIP_ADDRESS,
      MIN_TIP.toString(),
    ],
    scenarios: MAIN.filter((s) => FLOOR.has(s.name) && want(s.name)),
  },
  txgate: {
    port: BASE + 2,
    args: [TXGATE_CLI, '--config', join(dir, 'txgate.json')],
    ready: '/ready',
    scenarios: MAIN.filter((s) => want(s.name)),
  },
} as const;
/**
 * The express lane on chain 4663 (--express-lane): the stub answers the auction's reads. Polled
 * once a minute: the auction's reads (every 250 ms by default: ~1.7M instructions a second here,
 * the idle figure) are background work, not a submission's.
 */
function expressLane() {
  const keyFile = join(dir, 'controller.key');
  writeFileSync(keyFile, LANE_KEY, { mode: 0o600 });
  const stub = `http://127.0.0.1:${STUB}`;
  return { rpc: stub, expressLane: { enabled: true, auction: `0x${'ab'.repeat(20)}`, endpoint: stub, keyFile, marginMs: 0, pollMs: 60_000, staleMs: 600_000 } };
}
writeFileSync(
  SERVERS.txgate.args[2]!,
  JSON.stringify({
    listen: { host: '127.0.0.1', port: SERVERS.txgate.port },
    internal: { host: '127.0.0.1', port: SERVERS.txgate.port + 1 },
    workers: 1,
    crypto: { signature: 'curve' },
    log: { level: 'info' },
    dedup: { acceptedTtlMs: 0 },
    // The lane on, for its scenarios (it adds a GET / upgrade route; POST / is as without it).
    websocket: { enabled: true, maxInFlight: 1024 },
    chains: [
      {
        chainId: 4663,
        hosts: ['127.0.0.1', 'localhost'],
        sequencers: [`http://127.0.0.1:${STUB}`],
        forward: { connections: 64, timeoutMs: 30_000, queueMs: 30_000 },
        // Probes off the measured rounds: one a second would count in each round by its wall
        // time, and under callgrind on a busy host a 1-s timeout marks the stub down (503).
        probe: { intervalMs: 600_000, timeoutMs: 60_000 },
        // No receipt held for resends (the pool repeats), as dedup is off.
        sync: { enabled: true, receiptTtlMs: 0 },
        ...(LANE ? expressLane() : {}),
      },
      {
        chainId: RECEIPT_CHAIN,
        hosts: [RECEIPT_HOST],
        sequencers: [`http://127.0.0.1:${STUB + 1}`],
        rpc: `http://127.0.0.1:${STUB + 1}`,
        forward: { connections: 64, timeoutMs: 30_000, queueMs: 30_000 },
        probe: { intervalMs: 600_000, timeoutMs: 60_000 },
        sync: { enabled: true, mode: 'receipt', receiptTtlMs: 0 },
      },
      {
        chainId: TRACK_CHAIN,
        hosts: [TRACK_HOST],
        sequencers: [`http://127.0.0.1:${STUB + 3}`],
        rpc: `http://127.0.0.1:${STUB + 3}`,
        forward: { connections: 64, timeoutMs: 30_000, queueMs: 30_000 },
        probe: { intervalMs: 600_000, timeoutMs: 60_000 },
        // The watcher off the measured rounds as the probes are (its first pass at start, then once a minute).
        track: { enabled: true, pollMs: 60_000, stallMs: 600_000 },
      },
      {
        chainId: WS_CHAIN,
        hosts: [WS_HOST],
        sequencers: [`ws://127.0.0.1:${STUB + 2}`],
        forward: { connections: 64, wsConnections: 2, timeoutMs: 30_000, queueMs: 30_000 },
        probe: { intervalMs: 600_000, timeoutMs: 60_000 },
      },
    ],
    accounts: { file: join(dir, 'accounts.json') },
  }),
);

// All three start under callgrind at once (node takes tens of seconds to start there; on two
// cores the starts overlap), then each is measured in turn and stopped.
const servers = Object.entries(SERVERS).map(([name, def]) => ({
  name,
  def,
  started: startServer(name, def.port, [...def.args], 'ready' in def ? def.ready : undefined),
}));
for (const s of servers) s.started.catch(() => undefined); // awaited below, in turn
const stageNames = new Map(STAGES.map((s) => [s.stage, s.same ?? s.name]));
let costs: StageCost[] = [];
let senderCost: { exit: number; paired: { median: number; lo: number; hi: number } } | undefined;
/** The forward to a ws:// sequencer: that submission less the exit at rate_limit (the stage before the forward), when both were measured. */
let wsForwardCost: { exit: number; cost: number; paired: { median: number; lo: number; hi: number } } | undefined;
const WS_SEQUENCER = 'valid submission to a WebSocket sequencer';
const sections: string[][] = [];
const say = (section: string[], line: string) => {
  section.push(line);
  process.stdout.write(line + '\n');
};
for (const { name, def, started: starting } of servers) {
  const server = await starting;
  const set: Scenario[] = [...def.scenarios];
  const withStages = name === 'txgate' && !opt['no-stages'];
  // A stage exit that is a main scenario is measured once.
  // (An exit that is a main scenario's request under another name takes the main one's name.)
  if (withStages)
    for (const s of [...STAGES, SENDER]) {
      const same = (s as { same?: string }).same;
      const named: Scenario = same !== undefined ? { ...s, name: same } : s;
      if (!set.some((x) => x.name === named.name)) set.push(named);
    }
  const measured = await measureSet(server, set);
  await stopServer(server);
  results.push(...measured.filter((m) => def.scenarios.some((s) => s.name === m.scenario)));
  if (!withStages) continue;
  const exit = (scenario: string) => measured.find((m) => m.scenario === scenario)!;
  const echoM = results.find((r) => r.server === 'echo')!;
  const perRound = (m: Measured) => m.rounds.map((r) => r.perReq);
  costs = stageCosts(
    { stage: 'front end', rounds: perRound(echoM) },
    STAGES.map((s) => ({ stage: s.stage, rounds: perRound(exit(stageNames.get(s.stage)!)) })),
  );
  const fee = exit(stageNames.get('fee')!);
  const sender = exit(SENDER.name);
  const pairs = perRound(sender).map((x, i) => x - (perRound(fee)[i] ?? x));
  senderCost = { exit: sender.median, paired: { median: median(pairs), lo: Math.min(...pairs), hi: Math.max(...pairs) } };
  // The per-stage table as soon as it is known.
  const t: string[] = [];
  sections.push(t);
  say(t, `\n## txgate per stage (instructions per request; paired rounds: each stage's exit less the exit before it, round by round)\n`);
  say(
    t,
    `Stage cost: the exits made non-decreasing in pipeline order (isotonic fit), so no stage is negative; paired: the median of the ${ROUNDS} paired differences and their range, which holds the true median difference with ${round(pairedConfidence(ROUNDS) * 100, 1)}% confidence. A stage whose range reaches zero is not resolved by this run.\n`,
  );
  say(t, '| stage | request exiting there | exit instr / req (spread) | **stage cost** | paired difference: median [range] | |');
  say(t, '|---|---|---|---|---|---|');
  say(t, `| front end (bare uWS read and write) | echo | ${k(echoM.median)} (${spreadPct(echoM)}) | **${k(echoM.median)}** | | |`);
  for (const c of costs) {
    const m = exit(stageNames.get(c.stage)!);
    const note = [
      c.pooled ? 'exit below the one before: pooled with it' : '',
      c.resolved ? '' : 'not resolved',
      m.spread > MAX_SPREAD ? `rounds spread > ${pct(MAX_SPREAD)}` : '',
    ]
      .filter((x) => x !== '')
      .join('; ');
    say(
      t,
      `| ${c.stage} | ${STAGES.find((x) => x.stage === c.stage)!.name} | ${k(c.exit)} (${spreadPct(m)}) | **${k(c.cost)}** | ${k(c.paired.median)} [${k(c.paired.lo)} … ${k(c.paired.hi)}] | ${note} |`,
    );
  }
  say(
    t,
    `| sender, with an allow-list (recovers the sender) | ${SENDER.name} | ${k(senderCost.exit)} (${spreadPct(sender)}) | **${k(Math.max(0, senderCost.exit - fee.median))}** over the fee exit | ${k(senderCost.paired.median)} [${k(senderCost.paired.lo)} … ${k(senderCost.paired.hi)}] | |`,
  );
  const wsSubmission = measured.find((m) => m.scenario === WS_SEQUENCER);
  if (wsSubmission !== undefined) {
    const limited = exit(stageNames.get('rate_limit')!);
    const d = perRound(wsSubmission).map((x, i) => x - (perRound(limited)[i] ?? x));
    wsForwardCost = {
      exit: wsSubmission.median,
      cost: Math.max(0, wsSubmission.median - limited.median),
      paired: { median: median(d), lo: Math.min(...d), hi: Math.max(...d) },
    };
    say(
      t,
      `| forward to a ws:// sequencer (instead of HTTP) | ${WS_SEQUENCER} | ${k(wsForwardCost.exit)} (${spreadPct(wsSubmission)}) | **${k(wsForwardCost.cost)}** over the rate_limit exit | ${k(wsForwardCost.paired.median)} [${k(wsForwardCost.paired.lo)} … ${k(wsForwardCost.paired.hi)}] | |`,
    );
  }
}

// Bytes allocated per request: each server again, plain (no valgrind), a 1-MB young generation.
const allocated = new Map<string, number>();
for (const [name, def] of Object.entries(SERVERS)) {
  const server = await startServer(name, def.port, [...def.args], 'ready' in def ? def.ready : undefined, true);
  for (const s of def.scenarios) {
    // A connection the server resets (a reference misanswering on a busy host) leaves this
    // figure out, said in one line, instead of ending the run with a stack trace.
    const bytes = await allocation(server, s).catch((e: unknown) => {
      process.stderr.write(`${name} / ${s.name}: bytes allocated per request not measured (${(e as Error).message})\n`);
      return Number.NaN;
    });
    allocated.set(`${name}/${s.name}`, bytes);
  }
  await stopServer(server);
}

// --- report ------------------------------------------------------------------------------------
const main: string[] = [];
const echoM = results.find((r) => r.server === 'echo')!;
const of = (server: string, scenario: string) => results.find((r) => r.server === server && r.scenario === scenario);
say(
  main,
  `\n## Instructions per request (callgrind; median of ${ROUNDS} rounds of ${N} after ${WARMUP} warm-up rounds; ${CONNS} connections; rounds spreading over ${pct(MAX_SPREAD)} measured again up to ${opt.retries} times; TurboFan compilations left out of each round and shown under GC; collections spread evenly over a scenario's rounds)\n`,
);
say(main, `Bare uWS echo: ${k(echoM.median)} instructions per request (rounds spread ${spreadPct(echoM)}).\n`);
/** A median as printed in the table: flagged where its rounds spread past --max-spread. */
const flagNoisy = (m: { median: number; spread: number }) => (m.spread > MAX_SPREAD ? `${k(m.median)} ⚠ noisy` : k(m.median));
say(main, '| scenario | floor | txgate | txgate / echo | floor / echo | **floor / txgate** | spread of rounds floor / txgate |');
say(main, '|---|---|---|---|---|---|---|');
for (const s of MAIN) {
  const g = of('txgate', s.name);
  if (g === undefined) continue;
  const f = of('floor', s.name);
  say(
    main,
    `| ${s.name} | ${f ? flagNoisy(f) : '—'} | ${flagNoisy(g)} | ${round(g.median / echoM.median, 2)}x | ${f ? `${round(f.median / echoM.median, 2)}x` : '—'} | **${f ? `${round(f.median / g.median, 3)}` : '—'}** | ${f ? spreadPct(f) : '—'} / ${spreadPct(g)} |`,
  );
}
if (leftOut.length > 0) say(main, `\nLeft out (their answers were not the scenario's in every re-measured round): ${leftOut.join(', ')}.`);
const noisy = results.filter((r) => r.spread > MAX_SPREAD);
if (noisy.length > 0)
  say(main, `\nRounds still spread over ${pct(MAX_SPREAD)} after re-measuring: ${noisy.map((r) => `${r.server} / ${r.scenario} ${spreadPct(r)}`).join(', ')}.`);
say(main, '\n## Garbage collection per request (the same rounds)\n');
say(
  main,
  '| server | scenario | KiB allocated / req | GC instructions / req (mean) | GC instructions / 10k req | scavenges / 10k req | full GCs / 10k req | worst round / median | JIT compilation / req (mean, left out) |',
);
say(main, '|---|---|---|---|---|---|---|---|---|');
for (const r of results)
  say(
    main,
    `| ${r.server} | ${r.scenario} | ${Number.isNaN(allocated.get(`${r.server}/${r.scenario}`) ?? 0) ? 'not measured' : round((allocated.get(`${r.server}/${r.scenario}`) ?? 0) / 1024, 2)} | ${k(r.gcPerReq)} | ${round((r.gcPerReq * 10_000) / 1e6, 1)}M | ${round(r.scavengesPer10k, 1)} | ${round(r.majorsPer10k, 2)} | ${round(r.max / r.median, 3)} | ${k(r.rounds.reduce((a, x) => a + x.jitPerReq * x.n, 0) / r.rounds.reduce((a, x) => a + x.n, 0))} |`,
  );
if (idle.size > 0) {
  say(main, `\n## Background work while idle (${IDLE_S} s after the warm-up; every round counts it by its wall time)\n`);
  say(main, '| server | instructions per second idle |');
  say(main, '|---|---:|');
  for (const [name, v] of idle) say(main, `| ${name} | ${k(v.perSecond)} |`);
  for (const [name, v] of idle) {
    if (v.top === undefined) continue;
    say(main, `\n### ${name} idle: self instructions per second by function\n`);
    say(main, '| function | instr / s |');
    say(main, '|---|---:|');
    for (const t of v.top) say(main, `| \`${t.fn.replace(/\|/g, '\\|')}\` | ${t.perCall} |`);
  }
}
if (TOP > 0) {
  say(main, `\n## Self instructions per request by function (--top ${TOP}: the median round of each scenario; node ran with --perf-basic-prof)\n`);
  for (const r of results) {
    const mid = [...r.rounds].filter((x) => x.top !== undefined).sort((a, b) => a.perReq - b.perReq)[r.rounds.length >> 1];
    if (mid?.top === undefined) continue;
    say(main, `### ${r.server}: ${r.scenario} (${k(mid.perReq)} instructions per request)\n`);
    say(main, '| function | instr / req |');
    say(main, '|---|---:|');
    for (const t of mid.top) say(main, `| \`${t.fn.replace(/\|/g, '\\|')}\` | ${t.perCall} |`);
    say(main, '');
  }
}
// The picture: the echo, the floor and txgate on a valid submission, txgate's bar split by stage.
/** A bar's note: the median, flagged where its rounds spread past --max-spread (the figure is then not to be read alone). */
const noted = (m: { median: number; spread: number }, text = k(m.median)) => barNote(text, m.spread, MAX_SPREAD);
const bars: Bar[] = [{ label: 'bare uWS echo (eth_chainId)', segments: [{ label: 'front end (echo)', value: echoM.median }], note: noted(echoM) }];
for (const s of MAIN) {
  const f = of('floor', s.name);
  if (f !== undefined && (s.name === 'valid submission' || costs.length === 0))
    bars.push({ label: `floor, ${s.name}`, segments: [{ label: 'floor', value: f.median }], note: noted(f) });
}
if (costs.length > 0) {
  const last = costs.at(-1)!;
  bars.push({
    label: 'txgate, valid submission, by stage',
    segments: [{ label: 'front end (echo)', value: echoM.median }, ...costs.map((c) => ({ label: c.stage, value: c.cost }))],
    note: (() => {
      const sub = of('txgate', 'valid submission');
      return sub !== undefined ? noted(sub, `${k(last.fitted)} (measured ${k(last.exit)})`) : `${k(last.fitted)} (measured ${k(last.exit)})`;
    })(),
  });
}
for (const s of MAIN) {
  const g = of('txgate', s.name);
  if (g !== undefined && !(costs.length > 0 && s.name === 'valid submission'))
    bars.push({ label: `txgate, ${s.name}`, segments: [{ label: 'txgate', value: g.median }], note: noted(g) });
}
const svgPath = run.write(
  'instr.svg',
  stackedBarsSvg({
    title: `Instructions per request (callgrind, ${medianName(ROUNDS)} of ${N}; ${new Date().toISOString().slice(0, 10)})`,
    unit: 'instructions per request',
    bars,
  }),
);
main.push(`
![instructions per request](${svgPath.split('/').at(-1)})`);
const minutes = round((Date.now() - started) / 60_000, 1);
// A quick run says how it differs from the committed one (its settings, by the JSON's names).
const differs =
  run.outDir === RESULTS_DIR ? '' : differsFrom(RESULTS_DIR, 'instr.json', { requests: N, warmup: WARMUP, rounds: ROUNDS, maxSpread: MAX_SPREAD });
if (differs !== '') process.stdout.write(`\n${differs}\n`);
const mdPath = run.write('instr.md', [...main, ...sections.flat(), ...(differs !== '' ? ['', differs] : []), `\n(${minutes} min)`].join('\n') + '\n');
run.write(
  'instr.json',
  JSON.stringify(
    {
      node: process.version,
      date: new Date().toISOString(),
      requests: N,
      warmup: WARMUP,
      rounds: ROUNDS,
      maxSpread: MAX_SPREAD,
      results,
      stageCosts: costs,
      sender: senderCost,
      ...(wsForwardCost !== undefined ? { wsForward: wsForwardCost } : {}),
      allocated: Object.fromEntries(allocated),
      idle: Object.fromEntries(idle),
    },
    null,
    2,
  ) + '\n',
);
process.stdout.write(`\n(${minutes} min) written to ${mdPath}, instr.json and instr.svg\n`);
process.exit(0);
