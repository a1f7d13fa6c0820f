/**
 * The forward alone at a fixed rate: drives HttpUpstream and WsUpstream directly (no txgate, no
 * uWS front) against the bench stub sequencer, open-loop (call i is due at start + i/rate and
 * its latency runs from then to its answer), to tell a stall of the ws:// path from one of the
 * host. Paths alternate in rounds, each in a fresh process pinned to core 1, the stub on
 * core 0 (or beside the driver: --stub-core 1); per path: p50/p99/p99.9/max, the longest stall (calls due ≥ 1 ms apart answered
 * within 0.2 ms of each other, the span from the first one's due time), and for ws:// how the
 * calls were spread over the connections.
 *
 * Usage: node dist/bench/entry/upstream-rate.js [--rate 1000] [--seconds 5] [--rounds 2]
 *   [--paths http,ws2,ws8] (wsN: N connections) [--port 18297] [--stub-core 0] [--json FILE]
 *   node dist/bench/entry/upstream-rate.js --child PATH URL RATE SECONDS   (one path; prints RESULT {…})
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type WebSocket from 'ws';
import { HttpUpstream } from '../../src/upstreams/http/http-upstream.js';
import type { Upstream } from '../../src/upstreams/upstream.js';
import { WsUpstream } from '../../src/upstreams/ws/ws-upstream.js';
import { startStub } from '../servers/stub-sequencer.js';

const args = process.argv.slice(2);
const flag = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : dflt;
};
if (args.includes('--help')) {
  process.stdout.write(
    'Usage: node dist/bench/entry/upstream-rate.js [--rate 1000] [--seconds 5] [--rounds 2] [--paths http,ws2,ws8] [--port 18297] [--stub-core 0] [--json FILE]\n' +
      "(the driver runs on core 1; --stub-core 1 puts the stub beside it, as bench:load's fixed rate puts it beside txgate)\n" +
      'Drives HttpUpstream / WsUpstream (wsN: N connections) directly against bench/servers/stub-sequencer at a fixed rate;\n' +
      'prints per path p50/p99/p99.9/max µs, the longest stall and how ws:// calls were spread over connections.\n',
  );
  process.exit(0);
}

const raw =
  '0x02f86f82123780843b9aca0084b2d05e0082520894a0ee7a142d267c1f36714e4a8f75612f20a7972085e8d4a5100080c001a0' + 'ab'.repeat(32) + 'a0' + 'cd'.repeat(32);
const paramsJson = `["${raw}"]`;
const times = { timeoutMs: 2_000, queueMs: 2_000 };

/** ms a process's threads spent runnable and waiting for a core (/proc schedstat; Linux). */
function runqueueMs(pid: number | 'self'): number {
  let ns = 0;
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[1]);
  } catch {
    return Number.NaN;
  }
  return ns / 1e6;
}

interface Result {
  path: string;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  n: number;
  faults: number;
  /** The longest run of calls answered together: how many, and ms from the first one's due time to the answer. */
  stallCalls: number;
  stallMs: number;
  /** Of stallMs, the time the driver's own loop was not turning (gaps over 5 ms). */
  stallGapMs: number;
  /** ms the driver's threads waited for a core during the measured calls; the stub's (set by the parent). */
  driverRunqueueMs: number;
  stubRunqueueMs: number;
  /** Calls sent on each connection (ws:// only). */
  perConnection: number[];
  /** The p99 (µs) of the calls sent on each connection (ws:// only): one slow connection shows here. */
  p99PerConnection: number[];
}

async function child(path: string, url: string, rate: number, seconds: number): Promise<Result> {
  const conns = path.startsWith('ws') ? Number(path.slice(2)) : 0;
  const up: Upstream = conns > 0 ? new WsUpstream(url.replace('http:', 'ws:'), 1024, conns) : new HttpUpstream(url, 64);
  const perConnection: number[] = [];
  /** The connection the last frame was handed to (call() writes synchronously on an open one). */
  let sentOn = -1;
  if (conns > 0) {
    // Count the frames handed to each connection (a bench-only look inside).
    await new Promise((r) => setTimeout(r, 300));
    const links = (up as unknown as { links: { ws: WebSocket }[] }).links;
    links.forEach((l, k) => {
      perConnection[k] = 0;
      const send = l.ws.send.bind(l.ws);
      l.ws.send = ((d: Buffer, o: object) => {
        perConnection[k]!++;
        sentOn = k;
        send(d, o);
      }) as typeof l.ws.send;
    });
  }
  // Warm: connections open, JIT.
  for (let k = 0; k < 500; k++) await up.call('eth_sendRawTransaction', paramsJson, times);
  for (let k = 0; k < perConnection.length; k++) perConnection[k] = 0;

  const n = Math.floor(rate * seconds);
  const interval = 1000 / rate;
  const due = new Float64Array(n);
  const done = new Float64Array(n).fill(-1);
  const link = new Int16Array(n);
  let faults = 0;
  let answered = 0;
  let finished!: () => void;
  const all = new Promise<void>((r) => (finished = r));
  const rq0 = runqueueMs('self');
  const t0 = performance.now() + 5;
  let i = 0;
  // The driver's own gaps (its loop not turning: descheduled, GC, a long task), to tell them from a wait on the path.
  const gaps: [number, number][] = [];
  let last = performance.now();
  while (i < n) {
    const now = performance.now();
    if (now - last > 5) gaps.push([last, now]);
    last = now;
    while (i < n && t0 + i * interval <= now) {
      const k = i++;
      sentOn = -1;
      due[k] = t0 + k * interval;
      const call = up.call('eth_sendRawTransaction', paramsJson, times);
      link[k] = sentOn;
      void call.then((a) => {
        done[k] = performance.now();
        if (a.kind !== 'result') faults++;
        if (++answered === n) finished();
      });
    }
    // Spin as rate-probe.ts does: timers are too coarse for a 1-ms schedule.
    await new Promise((r) => setImmediate(r));
  }
  await Promise.race([all, new Promise((r) => setTimeout(r, 10_000))]);
  const driverRunqueueMs = Math.round(runqueueMs('self') - rq0);
  await up.close(true);
  const lat: number[] = [];
  for (let k = 0; k < n; k++) if (done[k]! >= 0) lat.push((done[k]! - due[k]!) * 1000);
  const sorted = [...lat].sort((a, b) => a - b);
  const pct = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
  const p99PerConnection = perConnection.map((_, c) => {
    const l: number[] = [];
    for (let k = 0; k < n; k++) if (link[k] === c && done[k]! >= 0) l.push((done[k]! - due[k]!) * 1000);
    l.sort((a, b) => a - b);
    return l.length === 0 ? 0 : Math.round(l[Math.min(l.length - 1, Math.floor(0.99 * l.length))]!);
  });
  let stallCalls = 0;
  let stallMs = 0;
  let stallFrom = 0;
  let stallTo = 0;
  for (let k = 0; k < n; ) {
    let j = k + 1;
    while (j < n && done[j]! >= 0 && Math.abs(done[j]! - done[k]!) < 0.2) j++;
    if (j - k > stallCalls) {
      stallCalls = j - k;
      stallMs = Math.round((done[k]! - due[k]!) * 10) / 10;
      stallFrom = due[k]!;
      stallTo = done[k]!;
    }
    k = j;
  }
  // How much of the longest stall the driver itself was not running (its loop's gaps inside it).
  let stallGapMs = 0;
  for (const [a, b] of gaps) stallGapMs += Math.max(0, Math.min(b, stallTo) - Math.max(a, stallFrom));
  stallGapMs = Math.round(stallGapMs * 10) / 10;
  return {
    path,
    p50: pct(50),
    p99: pct(99),
    p999: pct(99.9),
    max: Math.round(sorted[sorted.length - 1]!),
    n: lat.length,
    faults,
    stallCalls,
    stallMs,
    stallGapMs,
    perConnection,
    p99PerConnection,
    driverRunqueueMs,
    stubRunqueueMs: Number.NaN,
  };
}

if (args[0] === '--child') {
  const r = await child(args[1]!, args[2]!, Number(args[3]), Number(args[4]));
  process.stdout.write(`RESULT ${JSON.stringify(r)}\n`);
  process.exit(0);
}

const rate = Number(flag('rate', '1000'));
const seconds = Number(flag('seconds', '5'));
const rounds = Number(flag('rounds', '2'));
const paths = flag('paths', 'http,ws2,ws8').split(',');
const port = Number(flag('port', '18297'));
// uWS listens with SO_REUSEPORT: a port someone else's stub holds would be shared without a word.
await new Promise<void>((ok, fail) => {
  const probe = createServer().once('error', () => fail(new Error(`port ${port} is taken: pick another with --port`)));
  probe.listen(port, '127.0.0.1', () => probe.close(() => ok()));
});
const stub = await startStub({ port, cores: flag('stub-core', '0'), children: [] });
const results: Result[] = [];
try {
  for (let round = 0; round < rounds; round++)
    for (const path of paths) {
      const rq0 = runqueueMs(stub.pid!);
      const p = spawnSync(
        'taskset',
        ['-c', '1', 'node', fileURLToPath(import.meta.url), '--child', path, `http://127.0.0.1:${port}`, String(rate), String(seconds)],
        {
          encoding: 'utf8',
        },
      );
      const line = p.stdout.split('\n').find((l) => l.startsWith('RESULT '));
      if (line === undefined) throw new Error(`${path}: no result\n${p.stderr}`);
      const r = JSON.parse(line.slice(7)) as Result;
      // The stub's wait over the whole child (its warm-up included).
      r.stubRunqueueMs = Math.round(runqueueMs(stub.pid!) - rq0);
      results.push(r);
      process.stdout.write(
        `round ${round + 1} ${path.padEnd(5)} p50 ${r.p50} p99 ${r.p99} p99.9 ${r.p999} max ${r.max} µs; n ${r.n} faults ${r.faults}; ` +
          `longest stall ${r.stallCalls} calls at ${r.stallMs} ms (driver not running ${r.stallGapMs} ms of it); waiting for a core: driver ${r.driverRunqueueMs} ms, stub ${r.stubRunqueueMs} ms${r.perConnection.length > 0 ? `; per connection ${r.perConnection.join('/')} calls, p99 ${r.p99PerConnection.join('/')} µs` : ''}\n`,
      );
    }
} finally {
  stub.kill();
}
const json = flag('json', '');
if (json !== '') writeFileSync(json, JSON.stringify(results, null, 1));
