/**
 * Open-loop fixed-rate probe: request i is due at start + i/rate whatever the answers before it
 * did, and its latency runs from when it was due to its answer (a request that waits for a free
 * connection counts its wait: no coordinated omission). Keep-alive connections, one request in
 * flight on each; requests due while every connection is busy queue in order.
 *
 * Usage: node rate-probe.js INPUT.json, INPUT: {url, bodies, headers, rate, seconds, warmup,
 * connections, out}. The first `warmup` seconds are sent and not recorded. Prints
 * `RESULT {"p50","p99","p999","n","non200","maxQueued","probeGc"}` (µs; probeGc: the probe's
 * own GC pauses, ms in total) and writes `out`: `[[dueEpochMs, latencyUs], …]` for gc-trace.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { PerformanceObserver } from 'node:perf_hooks';

const { url, bodies, headers, rate, seconds, warmup, connections, out } = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as {
  url: string;
  bodies: string[];
  headers: Record<string, string>;
  rate: number;
  seconds: number;
  warmup: number;
  connections: number;
  out: string;
};
const u = new URL(url);
const head = Object.entries({ Host: u.host, ...headers })
  .map(([k, v]) => `${k}: ${v}\r\n`)
  .join('');
const requests = bodies.map((b) => Buffer.from(`POST ${u.pathname} HTTP/1.1\r\n${head}Content-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`));

let probeGcMs = 0;
new PerformanceObserver((l) => {
  for (const e of l.getEntries()) probeGcMs += e.duration;
}).observe({ entryTypes: ['gc'] });

const warm = Math.floor(rate * warmup);
const n = warm + Math.floor(rate * seconds);
const interval = 1000 / rate;
/** Due time (performance.now() ms) and latency (µs) of each recorded request. */
const dueAt = new Float64Array(n);
const latency = new Float64Array(n).fill(-1);
let non200 = 0;
let answered = 0;
const queue: number[] = [];
let qHead = 0;
let maxQueued = 0;

interface Conn {
  readonly sock: Socket;
  buf: Buffer;
  /** The request in flight (-1: idle). */
  cur: number;
}
const conns: Conn[] = [];
const idle: Conn[] = [];
let finished: () => void;
const allAnswered = new Promise<void>((r) => (finished = r));

function send(c: Conn, i: number): void {
  c.cur = i;
  c.sock.write(requests[i % requests.length]!);
}

function onData(c: Conn, d: Buffer): void {
  c.buf = c.buf.length === 0 ? d : Buffer.concat([c.buf, d]);
  for (;;) {
    const end = c.buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const m = /content-length: (\d+)/i.exec(c.buf.subarray(0, end).toString('latin1'));
    const total = end + 4 + Number(m?.[1] ?? 0);
    if (c.buf.length < total) return;
    const now = performance.now();
    if (c.buf.subarray(9, 12).toString('latin1') !== '200') non200++;
    c.buf = c.buf.subarray(total);
    const i = c.cur;
    latency[i] = (now - dueAt[i]!) * 1000;
    if (++answered === n) finished();
    if (qHead < queue.length) send(c, queue[qHead++]!);
    else {
      c.cur = -1;
      idle.push(c);
    }
  }
}

for (let k = 0; k < connections; k++) {
  const sock = connect(Number(u.port), u.hostname);
  sock.setNoDelay(true);
  await new Promise((r, j) => {
    sock.once('connect', r);
    sock.once('error', j);
  });
  const c: Conn = { sock, buf: Buffer.alloc(0), cur: -1 };
  sock.on('data', (d: Buffer) => onData(c, d));
  sock.on('close', () => {
    if (answered < n) {
      process.stderr.write(`rate probe: a connection closed with ${n - answered} answers outstanding\n`);
      process.exit(1);
    }
  });
  conns.push(c);
  idle.push(c);
}

const t0 = performance.now() + 5;
let i = 0;
while (i < n) {
  const now = performance.now();
  while (i < n && t0 + i * interval <= now) {
    dueAt[i] = t0 + i * interval;
    const c = idle.pop();
    if (c !== undefined) send(c, i);
    else {
      queue.push(i);
      maxQueued = Math.max(maxQueued, queue.length - qHead);
    }
    i++;
  }
  // Spin: timers are too coarse for a 1-ms schedule; answers are read between the turns.
  await new Promise((r) => setImmediate(r));
}
await Promise.race([allAnswered, new Promise((r) => setTimeout(r, 15_000))]);
for (const c of conns) c.sock.destroy();

const origin = performance.timeOrigin;
const rows: [number, number][] = [];
for (let k = warm; k < n; k++) if (latency[k]! >= 0) rows.push([origin + dueAt[k]!, Math.round(latency[k]! * 10) / 10]);
writeFileSync(out, JSON.stringify(rows));
const sorted = rows.map((r) => r[1]).sort((a, b) => a - b);
const pct = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
const lost = n - warm - rows.length;
process.stdout.write(
  `RESULT ${JSON.stringify({ p50: pct(50), p99: pct(99), p999: pct(99.9), n: rows.length, unanswered: lost, non200, maxQueued, probeGcMs: Math.round(probeGcMs * 10) / 10 })}\n`,
);
process.exit(0);
