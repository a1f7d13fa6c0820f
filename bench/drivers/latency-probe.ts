/**
 * Fixed-rate latency probe: one keep-alive connection, one request every 1/rate seconds (the
 * next one waits for the previous answer), each round trip timed with hrtime.
 * Usage: node latency-probe.js INPUT.json  ({url, bodies, headers, rate, seconds})
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';

const { url, bodies, headers, rate, seconds } = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as {
  url: string;
  bodies: string[];
  headers: Record<string, string>;
  rate: number;
  seconds: number;
};
const u = new URL(url);
const head = Object.entries({ Host: u.host, ...headers })
  .map(([k, v]) => `${k}: ${v}\r\n`)
  .join('');
const requests = bodies.map((b) => Buffer.from(`POST ${u.pathname} HTTP/1.1\r\n${head}Content-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`));

const sock = connect(Number(u.port), u.hostname);
sock.setNoDelay(true);
await new Promise((r) => sock.once('connect', r));

const samples: number[] = [];
let buf = Buffer.alloc(0);
let pending: ((ok: boolean) => void) | null = null;
sock.on('data', (d: Buffer) => {
  buf = Buffer.concat([buf, d]);
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return;
  const m = /content-length: (\d+)/i.exec(buf.subarray(0, end).toString());
  const total = end + 4 + Number(m?.[1] ?? 0);
  if (buf.length < total) return;
  const status = buf.subarray(9, 12).toString();
  buf = buf.subarray(total);
  pending?.(status === '200');
});

const interval = 1e9 / rate;
const n = Math.floor(rate * seconds);
let next = process.hrtime.bigint();
let bad = 0;
for (let i = 0; i < n; i++) {
  while (process.hrtime.bigint() < next) await new Promise((r) => setImmediate(r));
  const t0 = process.hrtime.bigint();
  const ok = await new Promise<boolean>((resolve) => {
    pending = resolve;
    sock.write(requests[i % requests.length]!);
  });
  const dt = Number(process.hrtime.bigint() - t0) / 1000;
  if (!ok) bad++;
  if (i >= rate / 2) samples.push(dt); // skip the first half second (warm-up)
  next += BigInt(Math.round(interval));
}
sock.destroy();
samples.sort((a, b) => a - b);
const pct = (p: number) => Math.round(samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))]!);
process.stdout.write(`RESULT ${JSON.stringify({ p50: pct(50), p99: pct(99), n: samples.length, non200: bad })}\n`);
