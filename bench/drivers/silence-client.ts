/**
 * bench:silence's client: a desk's serial submissions, one kept-alive connection per target
 * (undici, one request at a time; the client's own idle limit past any silence, so only the
 * server closes it), the targets interleaved request by request so that each sees the same
 * moments of the host's load: a warm-up, a steady stretch, then `reps` times a silence of
 * `silenceS` seconds and a burst of `burst` serial submissions. With `keepAliveS`, the client
 * keeps each connection alive through a silence as the client kit does (packages/client's
 * `keepAliveMs`, an `eth_chainId` on a connection idle that long): one to every target at each
 * multiple of `keepAliveS` inside the silence, none at its end (so the first submission finds
 * its connection idle for `keepAliveS` at most, and never behind a keep-alive). Each request's time is from the
 * write to the whole answer (a new connection's opening included, where the server closed the
 * kept one), and every answer must be a 200 with a result.
 *
 *   node dist/bench/drivers/silence-client.js INPUT.json   →   RESULT {"targets":[…]} on stdout
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Client } from 'undici';

interface Input {
  readonly targets: readonly { readonly name: string; readonly url: string }[];
  readonly key: string;
  /** JSON-RPC bodies, one per request, each sent once to every target. */
  readonly bodies: readonly string[];
  readonly warmup: number;
  readonly steady: number;
  readonly reps: number;
  readonly silenceS: number;
  readonly burst: number;
  /** Seconds between keep-alive calls in a silence (0: none; the servers close the idle connections). */
  readonly keepAliveS: number;
}

const input = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Input;
const clients = input.targets.map((t) => new Client(t.url, { pipelining: 1, keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000 }));
const bad = input.targets.map(() => 0);
const reconnects = input.targets.map(() => 0);
for (const [i, c] of clients.entries()) c.on('connect', () => reconnects[i]!++);
const headers = { 'content-type': 'application/json', 'x-api-key': input.key };
let next = 0;

async function one(i: number, body: string): Promise<number> {
  const t0 = performance.now();
  const r = await clients[i]!.request({ path: '/', method: 'POST', headers, body });
  const text = await r.body.text();
  const ms = performance.now() - t0;
  if (r.statusCode !== 200 || !text.includes('"result"')) bad[i]!++;
  return ms;
}

/** `n` requests to every target, interleaved (the order turned each step); each target's times. */
async function serial(n: number, turn: number): Promise<number[][]> {
  const out = input.targets.map(() => [] as number[]);
  for (let k = 0; k < n; k++) {
    const body = input.bodies[next++ % input.bodies.length]!;
    for (let j = 0; j < clients.length; j++) {
      const i = (j + turn) % clients.length;
      out[i]!.push(await one(i, body));
    }
  }
  return out;
}

const KEEP_ALIVE = '{"jsonrpc":"2.0","id":"keep-alive","method":"eth_chainId","params":[]}';
const sleepUntil = (t: number) => new Promise((res) => setTimeout(res, Math.max(0, t - performance.now())));

/** A silence of `silenceS` seconds, with the kit's keep-alive calls where `keepAliveS` asks for them. */
async function silence(): Promise<void> {
  const start = performance.now();
  for (let at = input.keepAliveS; input.keepAliveS > 0 && at < input.silenceS; at += input.keepAliveS) {
    await sleepUntil(start + at * 1000);
    for (const [i, c] of clients.entries()) {
      const r = await c.request({ path: '/', method: 'POST', headers, body: KEEP_ALIVE });
      const text = await r.body.text();
      if (r.statusCode !== 200 || !text.includes('"result"')) bad[i]!++;
    }
  }
  await sleepUntil(start + input.silenceS * 1000);
}

await serial(input.warmup, 0);
const steady = await serial(input.steady, 0);
const bursts: number[][][] = input.targets.map(() => []);
for (let r = 0; r < input.reps; r++) {
  await silence();
  // The order turned each repetition: no target is always the first to wake.
  const b = await serial(input.burst, r);
  for (const [i, times] of b.entries()) bursts[i]!.push(times);
}
const round = (x: number) => Math.round(x * 1000) / 1000;
process.stdout.write(
  `RESULT ${JSON.stringify({
    targets: input.targets.map((t, i) => ({
      name: t.name,
      steady: steady[i]!.map(round),
      bursts: bursts[i]!.map((b) => b.map(round)),
      bad: bad[i],
      connections: reconnects[i],
    })),
  })}\n`,
);
await Promise.all(clients.map((c) => c.close()));
