/**
 * `npm run bench:tls`: TLS at the edge, side by side in one run on this machine:
 *   plain   txgate, plain HTTP (the reference);
 *   txgate  txgate terminating TLS itself (`listen.tls`);
 *   nginx   nginx (Debian's package) terminating TLS in front of the plain txgate (keep-alive
 *           upstream, HTTP/1.1), one worker process.
 * For each: requests on kept-alive connections, and a new TLS connection per request (full
 * handshake, no resumption). Per scenario, the median of `--rounds` rounds: requests per second
 * (wall), requests per second per core (requests over the CPU time of every server process),
 * p50 latency and what it adds to plain (all with the servers running natively); then the same
 * rounds with every server process under valgrind's callgrind (instrumentation on for the
 * measured rounds only, `callgrind_control -z`/`-d` around each): instructions per request of
 * every process involved. Goals: txgate's own TLS costs at most half of what the nginx
 * hop costs per kept-alive request, and a TLS submission at most 1.3x the instructions of a
 * plain one. The client (this process) runs on the same cores: compare instructions, not req/s,
 * on a shared machine.
 *
 * Needs nginx, openssl and valgrind (Debian: apt-get install -y nginx-light openssl valgrind);
 * installs nothing. Loopback only.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { makeDevTls } from '../../src/dev/dev-tls.js';
import { sign1559 } from '../../src/dev/sign.js';
import { initCrypto } from '../../src/native.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { median, round, startBench } from '../shared/lib.js';
import { TXGATE_CLI, server } from '../shared/paths.js';

const bench = startBench(
  'bench:tls',
  'TLS at the edge: txgate terminating TLS itself against nginx terminating it in front of plain txgate (req/s, p50 added, instructions per request of every process).',
  {
    requests: { kind: 'int', quick: 1000, full: 20000, help: 'kept-alive requests per round (timed rounds)' },
    handshakes: { kind: 'int', quick: 100, full: 3000, help: 'new-connection requests per round (timed rounds)' },
    'instr-requests': { kind: 'int', quick: 300, full: 2000, help: 'kept-alive requests per round under callgrind' },
    'instr-handshakes': {
      kind: 'int',
      quick: 30,
      full: 300,
      help: 'new-connection requests per round under callgrind (a full handshake each: millions of instructions)',
    },
    connections: { kind: 'int', quick: 8, full: 16, help: 'concurrent connections (one request in flight on each)' },
    rounds: { kind: 'int', quick: 3, full: 5, help: 'measured rounds per scenario (the median is reported)' },
    port: { kind: 'int', min: 1024, quick: 19300, help: 'first of the loopback ports used (8 consecutive)' },
  },
);
const { opt } = bench;
for (const tool of ['nginx', 'openssl', 'valgrind', 'callgrind_control', 'callgrind_annotate']) {
  const which = spawnSync('sh', ['-c', `command -v ${tool} || ls /usr/sbin/${tool}`], { encoding: 'utf8' });
  if (which.status !== 0) {
    process.stderr.write(`bench:tls: ${tool} not found (Debian: apt-get install -y nginx-light openssl valgrind)\n`);
    process.exit(1);
  }
}
await initCrypto();

// --- fixtures -------------------------------------------------------------------------------
const dir = bench.tmp;
const P = { stub: opt.port, plain: opt.port + 1, tls: opt.port + 3, nginx: opt.port + 5 };
const tls = makeDevTls(dir);
const ca = readFileSync(tls.caFile);
const key = 'txg_bench_' + randomBytes(24).toString('base64url');
const senders = Array.from({ length: 16 }, () => '0x' + randomBytes(32).toString('hex'));
const POOL = 512;
const rpc = (method: string, params: unknown[], id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const submissions = await Promise.all(
  Array.from({ length: POOL }, async (_, i) =>
    rpc(
      'eth_sendRawTransaction',
      [
        await sign1559(
          {
            chainId: 4663,
            nonce: Math.floor(i / senders.length),
            maxPriorityFeePerGas: 1_000_000_000n,
            maxFeePerGas: 3_000_000_000n,
            gas: 21000n,
            to: ANVIL_TIP_ADDRESS,
            value: 10n ** 12n,
          },
          senders[i % senders.length]!,
        ),
      ],
      i,
    ),
  ),
);
writeFileSync(
  join(dir, 'accounts.json'),
  JSON.stringify({
    accounts: [
      {
        id: 'bench',
        keySha256: [keySha256(key)],
        grants: [{ chainId: 4663, rateLimit: { perSecond: 1e6, burst: 1e6 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: '1000000000000' }],
      },
    ],
  }),
);
const txgateConfig = (port: number, withTls: boolean) => ({
  listen: { host: '127.0.0.1', port, ...(withTls ? { tls: { enabled: true, certFile: tls.certFile, keyFile: tls.keyFile } } : {}) },
  internal: { host: '127.0.0.1', port: port + 1 },
  workers: 1,
  log: { level: 'warn' },
  dedup: { acceptedTtlMs: 0 },
  chains: [
    {
      chainId: 4663,
      hosts: ['127.0.0.1', 'localhost'],
      sequencers: [`http://127.0.0.1:${P.stub}`],
      forward: { connections: 64, timeoutMs: 30_000, queueMs: 30_000 },
      probe: { intervalMs: 600_000, timeoutMs: 60_000 },
    },
  ],
  accounts: { file: join(dir, 'accounts.json') },
});
writeFileSync(join(dir, 'plain.json'), JSON.stringify(txgateConfig(P.plain, false)));
writeFileSync(join(dir, 'tls.json'), JSON.stringify(txgateConfig(P.tls, true)));
writeFileSync(
  join(dir, 'nginx.conf'),
  `daemon off;
master_process off;
worker_processes 1;
error_log ${dir}/nginx-error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/nginx-body;
  proxy_temp_path ${dir}/nginx-proxy;
  fastcgi_temp_path ${dir}/nginx-fastcgi;
  uwsgi_temp_path ${dir}/nginx-uwsgi;
  scgi_temp_path ${dir}/nginx-scgi;
  upstream txgate { server 127.0.0.1:${P.plain}; keepalive 64; keepalive_timeout 5s; }
  server {
    listen 127.0.0.1:${P.nginx} ssl;
    ssl_certificate ${tls.certFile};
    ssl_certificate_key ${tls.keyFile};
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache off;
    ssl_session_tickets off;
    keepalive_requests 1000000;
    location / {
      proxy_pass http://txgate;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
    }
  }
}
`,
);

// --- processes ------------------------------------------------------------------------------
let stopping = false;
/** Under callgrind: instrumentation off until the measured rounds. */
const VALGRIND = ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--dump-instr=no', '--collect-jumps=no'];
function start(name: string, cmd: string[], underCallgrind: boolean): ChildProcess {
  const argv = underCallgrind
    ? [
        ...VALGRIND,
        '--smc-check=all-non-file',
        `--callgrind-out-file=${join(dir, `cg.${name}.%p`)}`,
        ...(cmd[0] === process.execPath ? [cmd[0], '--single-threaded', ...cmd.slice(1)] : cmd),
      ]
    : cmd;
  const c = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  c.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  c.on('exit', (code) => {
    if (!stopping) {
      process.stderr.write(`bench:tls: ${name} exited (${code}): ${err.trim().split('\n').at(-1) ?? ''}\n`);
      process.exit(1);
    }
  });
  bench.children.push(c);
  return c;
}
const stub = start('stub', [process.execPath, server('stub-sequencer'), String(P.stub)], false);

interface Servers {
  readonly plain: ChildProcess;
  readonly tls: ChildProcess;
  readonly nginx: ChildProcess;
}
async function startServers(underCallgrind: boolean): Promise<Servers> {
  const servers = {
    plain: start('plain', [process.execPath, TXGATE_CLI, '--config', join(dir, 'plain.json')], underCallgrind),
    tls: start('tls', [process.execPath, TXGATE_CLI, '--config', join(dir, 'tls.json')], underCallgrind),
    nginx: start('nginx', ['nginx', '-c', join(dir, 'nginx.conf'), '-p', dir], underCallgrind),
  };
  for (const port of [P.plain, P.tls, P.nginx]) await waitFor(port, underCallgrind ? 600 : 60);
  return servers;
}
async function stopServers(s: Servers): Promise<void> {
  stopping = true;
  await Promise.all(
    Object.values(s).map((c: ChildProcess) => {
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      return gone;
    }),
  );
  stopping = false;
}

async function waitFor(port: number, seconds: number): Promise<void> {
  for (let i = 0; i < seconds * 10; i++) {
    const ok = await new Promise<boolean>((r) => {
      const s = netConnect(port, '127.0.0.1', () => {
        s.destroy();
        r(true);
      }).once('error', () => r(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port}`);
}

// --- the client -----------------------------------------------------------------------------
interface Target {
  readonly name: 'plain' | 'txgate' | 'nginx';
  readonly port: number;
  readonly secure: boolean;
  /** The server processes whose instructions and CPU count for this deployment. */
  readonly procs: readonly [string, ChildProcess][];
}
const targetsOf = (s: Servers): Target[] => [
  { name: 'plain', port: P.plain, secure: false, procs: [['txgate', s.plain]] },
  { name: 'txgate', port: P.tls, secure: true, procs: [['txgate', s.tls]] },
  {
    name: 'nginx',
    port: P.nginx,
    secure: true,
    procs: [
      ['nginx', s.nginx],
      ['txgate', s.plain],
    ],
  },
];
const request = (body: string, auth: boolean, close: boolean) =>
  `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${auth ? `X-Api-Key: ${key}\r\n` : ''}${close ? 'Connection: close\r\n' : ''}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

type Sock = ReturnType<typeof netConnect>;
function open(t: Target): Promise<Sock> {
  return new Promise((resolve, reject) => {
    const o: ConnectionOptions & { noDelay: boolean } = { host: '127.0.0.1', port: t.port, servername: 'localhost', ca, noDelay: true };
    const s: Sock = t.secure ? tlsConnect(o, () => resolve(s)) : netConnect({ port: t.port, host: '127.0.0.1', noDelay: true }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Sends one request on `s` and resolves with its status when the whole answer is in. */
function exchange(s: Sock, text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString('latin1');
      const head = buf.indexOf('\r\n\r\n');
      if (head < 0) return;
      const len = Number(/content-length: *(\d+)/i.exec(buf.slice(0, head))?.[1] ?? 0);
      if (buf.length < head + 4 + len) return;
      s.off('data', onData);
      resolve(Number(buf.slice(9, 12)));
    };
    const onError = (e: Error) => {
      s.off('data', onData);
      reject(e);
    };
    s.on('data', onData);
    s.once('error', onError);
    s.write(text);
    s.once('data', () => s.off('error', onError));
  });
}

interface Scenario {
  readonly name: string;
  readonly kept: boolean;
  readonly bodies: readonly string[];
  readonly auth: boolean;
}
const SCENARIOS: Scenario[] = [
  { name: 'eth_chainId, kept-alive', kept: true, bodies: [rpc('eth_chainId', [])], auth: false },
  { name: 'submission, kept-alive', kept: true, bodies: submissions, auth: true },
  { name: 'eth_chainId, new connection each', kept: false, bodies: [rpc('eth_chainId', [])], auth: false },
];

/** The kept-alive connections of a round, opened (handshakes done) before it is measured. */
async function openAll(t: Target, sc: Scenario): Promise<Sock[]> {
  return sc.kept ? Promise.all(Array.from({ length: opt.connections }, () => open(t))) : [];
}

/** One round: `n` requests over `opt.connections` workers (on `kept`'s connections, kept-alive); latencies in µs. */
async function runRound(t: Target, sc: Scenario, n: number, kept?: Sock[]): Promise<number[]> {
  let next = 0;
  const lat: number[] = [];
  const socks = kept ?? (await openAll(t, sc));
  const worker = async (w: number) => {
    let s = sc.kept ? socks[w]! : null;
    for (;;) {
      const i = next++;
      if (i >= n) break;
      const text = request(sc.bodies[i % sc.bodies.length]!, sc.auth, !sc.kept);
      const t0 = process.hrtime.bigint();
      if (!sc.kept) s = await open(t);
      const status = await exchange(s!, text);
      lat.push(Number(process.hrtime.bigint() - t0) / 1000);
      if (status !== 200) throw new Error(`${t.name} ${sc.name}: status ${status}`);
      if (!sc.kept) s!.destroy();
    }
    if (kept === undefined) s?.destroy();
  };
  await Promise.all(Array.from({ length: opt.connections }, (_, w) => worker(w)));
  return lat;
}

/** CPU seconds (user + system) a process has used. */
function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

function control(flag: '-z' | '-d' | '--instr=on', pid: number): void {
  const r = spawnSync('callgrind_control', [flag, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${flag} ${pid}: ${r.stderr}`);
}

/**
 * The instructions of the newest callgrind dump of `pid` (the dumps are removed), less V8's
 * optimizing compiler (Runtime_CompileOptimized, inclusive: with --single-threaded it runs
 * inside whichever round a function got hot in, as bench:instr leaves it out too).
 */
function dumped(pid: number): number {
  const files = readdirSync(dir).filter((f) => f.includes(`.${pid}.`) && f.startsWith('cg.'));
  const newest = files.sort((a, b) => Number(a.split('.').at(-1)) - Number(b.split('.').at(-1))).at(-1);
  if (newest === undefined) throw new Error(`no callgrind dump of ${pid}`);
  const file = join(dir, newest);
  const text = readFileSync(file, 'utf8');
  const annotated = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 64 << 20 }).stdout;
  const jit = annotated
    .split('\n')
    .filter((l) => l.includes('v8::internal::Runtime_CompileOptimized'))
    .reduce((a, l) => a + Number(l.trim().split(' ')[0]!.replace(/,/g, '')), 0);
  for (const f of files) rmSync(join(dir, f));
  return Number(/^totals: (\d+)/m.exec(text)?.[1] ?? /^summary: (\d+)/m.exec(text)?.[1]) - jit;
}

interface Timed {
  readonly target: string;
  readonly scenario: string;
  readonly rps: number;
  readonly rpsPerCore: number;
  readonly p50: number;
}
interface Counted {
  readonly target: string;
  readonly scenario: string;
  /** Instructions per request, by process (median round), and the median total. */
  readonly instr: Record<string, number>;
  readonly total: number;
  /** Spread of the rounds' totals (max/min - 1). */
  readonly spread: number;
}

// Timed rounds: every server native.
const timed: Timed[] = [];
{
  const servers = await startServers(false);
  for (const sc of SCENARIOS) {
    const n = sc.kept ? opt.requests : opt.handshakes;
    for (const t of targetsOf(servers)) {
      await runRound(t, sc, Math.min(n, 300)); // warm-up (JIT, pools)
      const rounds: { rps: number; perCore: number; p50: number }[] = [];
      for (let r = 0; r < opt.rounds; r++) {
        const socks = await openAll(t, sc);
        const cpu0 = t.procs.map(([, c]) => cpuSeconds(c.pid!));
        const t0 = process.hrtime.bigint();
        const lat = await runRound(t, sc, n, socks);
        const wall = Number(process.hrtime.bigint() - t0) / 1e9;
        const cpu = t.procs.reduce((sum, [, c], i) => sum + cpuSeconds(c.pid!) - cpu0[i]!, 0);
        for (const s of socks) s.destroy();
        rounds.push({ rps: n / wall, perCore: cpu > 0 ? n / cpu : Number.NaN, p50: median(lat) });
      }
      timed.push({
        target: t.name,
        scenario: sc.name,
        rps: median(rounds.map((r) => r.rps)),
        rpsPerCore: median(rounds.map((r) => r.perCore)),
        p50: median(rounds.map((r) => r.p50)),
      });
      process.stderr.write(`  timed   ${t.name.padEnd(7)} ${sc.name}: ${Math.round(timed.at(-1)!.rps)} req/s, p50 ${Math.round(timed.at(-1)!.p50)} µs\n`);
    }
  }
  await stopServers(servers);
}

// Counted rounds: every server under callgrind.
const counted: Counted[] = [];
{
  process.stderr.write('  starting the servers under callgrind (node takes tens of seconds there)\n');
  const servers = await startServers(true);
  for (const sc of SCENARIOS) {
    const n = sc.kept ? opt['instr-requests'] : opt['instr-handshakes'];
    for (const t of targetsOf(servers)) {
      // Warm-up, uninstrumented: the hot code tiered up before anything is counted.
      await runRound(t, sc, sc.kept ? (bench.full ? 3000 : 800) : 50);
      for (const [, c] of t.procs) control('--instr=on', c.pid!);
      await runRound(t, sc, Math.min(n, 50)); // warm-up, instrumented (callgrind's own code cache)
      const rounds: { instr: Record<string, number>; total: number }[] = [];
      for (let r = 0; r < opt.rounds; r++) {
        // Kept-alive: the connections' handshakes before the counters are zeroed (they are the new-connection scenario's).
        const socks = await openAll(t, sc);
        for (const [, c] of t.procs) control('-z', c.pid!);
        await runRound(t, sc, n, socks);
        const instr: Record<string, number> = {};
        for (const [name, c] of t.procs) {
          control('-d', c.pid!);
          instr[name] = dumped(c.pid!) / n;
        }
        for (const s of socks) s.destroy();
        rounds.push({ instr, total: Object.values(instr).reduce((a, b) => a + b, 0) });
      }
      const totals = rounds.map((r) => r.total);
      const mid = rounds.find((r) => r.total === median(totals)) ?? rounds[0]!;
      counted.push({ target: t.name, scenario: sc.name, instr: mid.instr, total: median(totals), spread: Math.max(...totals) / Math.min(...totals) - 1 });
      process.stderr.write(`  counted ${t.name.padEnd(7)} ${sc.name}: ${round(counted.at(-1)!.total / 1000, 1)}k instructions/request\n`);
    }
  }
  await stopServers(servers);
}
stopping = true;
stub.kill('SIGTERM');

// --- report ---------------------------------------------------------------------------------
const k = (n: number) => `${round(n / 1000, 1)}k`;
const lines: string[] = [];
lines.push(
  `bench:tls (${opt.connections} connections, ${opt.rounds} rounds, medians; timed: ${opt.requests} kept-alive / ${opt.handshakes} new-connection requests per round; counted under callgrind: ${opt['instr-requests']} kept-alive / ${opt['instr-handshakes']} new-connection per round)`,
);
lines.push(
  `${spawnSync('nginx', ['-v'], { encoding: 'utf8' }).stderr.trim()}, ${spawnSync('valgrind', ['--version'], { encoding: 'utf8' }).stdout.trim()}, node ${process.version}`,
);
lines.push('');
lines.push('| scenario | deployment | req/s | req/s per core | p50 µs | p50 added vs plain µs | instructions/request (by process) | total | rounds spread |');
lines.push('|---|---|---|---|---|---|---|---|---|');
for (const c of counted) {
  const r = { ...c, ...timed.find((x) => x.scenario === c.scenario && x.target === c.target)! };
  const ref = timed.find((x) => x.scenario === r.scenario && x.target === 'plain')!;
  const by = Object.entries(r.instr)
    .map(([p, v]) => `${p} ${k(v)}`)
    .join(' + ');
  lines.push(
    `| ${r.scenario} | ${r.target} | ${Math.round(r.rps)} | ${Math.round(r.rpsPerCore)} | ${Math.round(r.p50)} | ${r.target === 'plain' ? '' : Math.round(r.p50 - ref.p50)} | ${by} | ${k(r.total)} | ${round(r.spread * 100, 1)}%${r.spread > 0.05 ? ' (noisy)' : ''} |`,
  );
}
const get = (target: string, scenario: string) => counted.find((r) => r.target === target && r.scenario === scenario)!.total;
const keptTls = get('txgate', 'eth_chainId, kept-alive') - get('plain', 'eth_chainId, kept-alive');
const keptHop = get('nginx', 'eth_chainId, kept-alive') - get('plain', 'eth_chainId, kept-alive');
const subRatio = get('txgate', 'submission, kept-alive') / get('plain', 'submission, kept-alive');
const noisy = counted.some((c) => c.scenario !== 'eth_chainId, new connection each' && c.spread > 0.1);
lines.push('');
lines.push(
  `txgate's own TLS per kept-alive request: ${k(keptTls)} instructions; the nginx hop: ${k(keptHop)} (ratio ${round(keptTls / keptHop, 2)}; goal ≤ 0.5: ${keptTls <= keptHop / 2 ? 'met' : 'NOT met'})`,
);
lines.push(`a TLS submission over a plain one: ${round(subRatio, 3)}x the instructions (goal ≤ 1.3: ${subRatio <= 1.3 ? 'met' : 'NOT met'})`);
if (noisy) lines.push('the counted rounds spread over 10%: GC in a few hundred requests; read the figures of a --full run');
const text = lines.join('\n') + '\n';
process.stdout.write('\n' + text);
process.stdout.write(`written: ${bench.write('tls-edge.md', text)}\n`);
process.exit(0);
