/**
 * The load generator of `bench:ws` (its own process, on the load core): requests over one
 * WebSocket with `inFlight` outstanding, or over `inFlight` keep-alive HTTP connections (one
 * request each at a time), for `seconds`; or, with `rate`, one request every 1/rate s (open
 * loop) and each round trip timed. Usage: node ws-client.js INPUT.json
 * ({mode: 'ws'|'http', url, key, bodies, inFlight, seconds, rate?})
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import WebSocket from 'ws';

const o = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as {
  mode: 'ws' | 'http';
  url: string;
  key: string;
  bodies: string[];
  inFlight: number;
  seconds: number;
  rate?: number;
};
const withId = (body: string, id: number) => body.replace(/"id":[^,}]+/, `"id":${id}`);
let seq = 0;
let ok = 0;
let bad = 0;
const samples: number[] = [];

/** Sends one request; resolves when its answer came (true: a result). */
let send: (body: string) => Promise<boolean>;
let close: () => void;

if (o.mode === 'ws') {
  const ws = new WebSocket(o.url.replace(/^http/, 'ws'), { headers: { 'x-api-key': o.key }, perMessageDeflate: false });
  await new Promise((r, j) => {
    ws.once('open', r);
    ws.once('error', j);
  });
  const waiting = new Map<number, (ok: boolean) => void>();
  ws.on('message', (d) => {
    const text = d.toString();
    const m = /"id":(\d+)/.exec(text);
    const id = m === null ? -1 : Number(m[1]);
    const w = waiting.get(id);
    if (w === undefined) return;
    waiting.delete(id);
    w(text.includes('"result"'));
  });
  send = (body) =>
    new Promise((resolve) => {
      const id = ++seq;
      waiting.set(id, resolve);
      ws.send(withId(body, id));
    });
  close = () => ws.close();
} else {
  const u = new URL(o.url);
  const pool = new Pool(u.origin, { connections: o.inFlight, pipelining: 1 });
  send = async (body) => {
    const r = await pool.request({ method: 'POST', path: u.pathname, headers: { 'content-type': 'application/json', 'x-api-key': o.key }, body });
    await r.body.text();
    return r.statusCode === 200;
  };
  close = () => void pool.close();
}

const pick = () => o.bodies[seq % o.bodies.length]!;
if (o.rate === undefined) {
  const end = performance.now() + o.seconds * 1000;
  await Promise.all(
    Array.from({ length: o.inFlight }, async () => {
      while (performance.now() < end) {
        if (await send(pick())) ok++;
        else bad++;
        if (o.mode === 'http') seq++;
      }
    }),
  );
  process.stdout.write(`RESULT ${JSON.stringify({ requests: ok + bad, rps: Math.round((ok + bad) / o.seconds), non200: bad })}\n`);
} else {
  const n = Math.floor(o.rate * o.seconds);
  const interval = 1000 / o.rate;
  const t0 = performance.now();
  const all: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const due = t0 + i * interval;
    while (performance.now() < due) await new Promise((r) => setImmediate(r));
    const s = performance.now();
    if (o.mode === 'http') seq++;
    all.push(
      send(pick()).then((good) => {
        if (good) ok++;
        else bad++;
        if (i >= o.rate! / 2) samples.push((performance.now() - s) * 1000); // skip the first half second
      }),
    );
  }
  await Promise.all(all);
  samples.sort((a, b) => a - b);
  const pct = (p: number) => Math.round(samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))]!);
  process.stdout.write(`RESULT ${JSON.stringify({ p50: pct(50), p99: pct(99), n: samples.length, non200: bad })}\n`);
}
close();
process.exit(0);
