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
 * The client is bench/tls/client.ts, the servers bench/tls/servers.ts.
 *
 * Needs nginx, openssl and valgrind (Debian: apt-get install -y nginx-light openssl valgrind);
 * installs nothing. Loopback only.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { makeDevTls } from '../../src/dev/dev-tls.js';
import { submissionBodies } from '../common/transfers.js';
import { initCrypto } from '../../src/base/native.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { startBench } from '../common/bench-run.js';
import { median, round } from '../common/figures.js';
import { openAll, runRound, type ClientSettings, type Scenario } from '../tls/client.js';
import { control, cpuSeconds, dumped, TlsServers } from '../tls/servers.js';

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
const tls = makeDevTls(dir);
const ca = readFileSync(tls.caFile);
const key = 'txg_bench_' + randomBytes(24).toString('base64url');
const POOL = 512;
const rpc = (method: string, params: unknown[], id = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const submissions = submissionBodies(POOL);

const tlsServers = new TlsServers({
  dir,
  children: bench.children,
  ports: { stub: opt.port, plain: opt.port + 1, tls: opt.port + 3, nginx: opt.port + 5 },
  cert: tls,
  accounts: {
    accounts: [
      {
        id: 'bench',
        keySha256: [keySha256(key)],
        grants: [{ chainId: 4663, rateLimit: { perSecond: 1e6, burst: 1e6 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: '1000000000000' }],
      },
    ],
  },
});
const stub = await tlsServers.startStub();
const client: ClientSettings = { connections: opt.connections, ca, key };
const SCENARIOS: Scenario[] = [
  { name: 'eth_chainId, kept-alive', kept: true, bodies: [rpc('eth_chainId', [])], auth: false },
  { name: 'submission, kept-alive', kept: true, bodies: submissions, auth: true },
  { name: 'eth_chainId, new connection each', kept: false, bodies: [rpc('eth_chainId', [])], auth: false },
];

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
  const servers = await tlsServers.start(false);
  for (const sc of SCENARIOS) {
    const n = sc.kept ? opt.requests : opt.handshakes;
    for (const t of tlsServers.targets(servers)) {
      await runRound(client, t, sc, Math.min(n, 300)); // warm-up (JIT, pools)
      const rounds: { rps: number; perCore: number; p50: number }[] = [];
      for (let r = 0; r < opt.rounds; r++) {
        const socks = await openAll(client, t, sc);
        const cpu0 = t.procs.map(([, c]) => cpuSeconds(c.pid!));
        const t0 = process.hrtime.bigint();
        const lat = await runRound(client, t, sc, n, socks);
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
  await tlsServers.stop(servers);
}

// Counted rounds: every server under callgrind.
const counted: Counted[] = [];
{
  process.stderr.write('  starting the servers under callgrind (node takes tens of seconds there)\n');
  const servers = await tlsServers.start(true);
  for (const sc of SCENARIOS) {
    const n = sc.kept ? opt['instr-requests'] : opt['instr-handshakes'];
    for (const t of tlsServers.targets(servers)) {
      // Warm-up, uninstrumented: the hot code tiered up before anything is counted.
      await runRound(client, t, sc, sc.kept ? (bench.full ? 3000 : 800) : 50);
      for (const [, c] of t.procs) control('--instr=on', c.pid!);
      await runRound(client, t, sc, Math.min(n, 50)); // warm-up, instrumented (callgrind's own code cache)
      const rounds: { instr: Record<string, number>; total: number }[] = [];
      for (let r = 0; r < opt.rounds; r++) {
        // Kept-alive: the connections' handshakes before the counters are zeroed (they are the new-connection scenario's).
        const socks = await openAll(client, t, sc);
        for (const [, c] of t.procs) control('-z', c.pid!);
        await runRound(client, t, sc, n, socks);
        const instr: Record<string, number> = {};
        for (const [name, c] of t.procs) {
          control('-d', c.pid!);
          instr[name] = dumped(dir, c.pid!) / n;
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
  await tlsServers.stop(servers);
}
tlsServers.finish();
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
