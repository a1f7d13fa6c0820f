/**
 * bench:load's fixed-rate section: valid submissions open loop at a fixed rate, the stub alone
 * (the reference), txgate over HTTP and txgate over ws:// to the same stub, alternating rounds;
 * the added latency of each percentile, and txgate's GC pauses against the slowest requests.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gcAgainst, readGc, type Sample } from '../drivers/gc-trace.js';
import { flagged } from '../common/figures.js';
import { round } from '../common/figures.js';
import { driver } from '../common/paths.js';
import type { LoadContext } from './context.js';
import { JSON_CT } from './fixtures.js';
import { stop } from './harness.js';

export interface RateOptions {
  /** Submissions per second. */
  readonly rate: number;
  /** Seconds measured per path, split over the rounds. */
  readonly seconds: number;
  readonly rounds: number;
  readonly connections: number;
  /** Unrecorded seconds before each round's samples; the first round's (a fresh txgate's JIT) longer. */
  readonly warmup: number;
  readonly firstWarmup: number;
}

export async function rate(c: LoadContext, o: RateOptions): Promise<Record<string, unknown>> {
  const { h, f } = c;
  // Open loop at a fixed rate: the direct path (the stub alone) is the reference; txgate over
  // HTTP and over ws:// forward to the same stub, on the server's core beside txgate (as the
  // latency section's placement: both paths cross between the cores alike).
  const RATE = o.rate;
  const perRound = o.seconds / o.rounds;
  c.say(
    `\n## Added latency at a fixed rate: ${RATE} submissions/s, open loop (${o.seconds} s a path in ${o.rounds} alternating rounds, ${o.connections} connections; latency from when each request was due)\n`,
  );
  const stubPort = h.port.stub(3);
  const near = await h.stub(3, h.s.serverCores);
  const gcFile = { http: join(h.s.dir, 'gc-http.jsonl'), ws: join(h.s.dir, 'gc-ws.jsonl') };
  const gates = {
    http: await h.gate({ sequencer: `http://127.0.0.1:${stubPort}`, gcOut: gcFile.http }),
    ws: await h.gate({ sequencer: `ws://127.0.0.1:${stubPort}`, gcOut: gcFile.ws }),
  };
  const paths = [
    ['direct', `http://127.0.0.1:${stubPort}/`, JSON_CT],
    ['http', gates.http.url, { ...JSON_CT, 'X-Api-Key': f.keys.load }],
    ['ws', gates.ws.url, { ...JSON_CT, 'X-Api-Key': f.keys.load }],
  ] as const;
  const samples: Record<string, Sample[]> = { direct: [], http: [], ws: [] };
  const stats: Record<string, { non200: number; unanswered: number; maxQueued: number; probeGcMs: number }> = {};
  let offset = 0;
  for (let r = 0; r < o.rounds; r++) {
    // Each path gets distinct transactions in every round (the same ones as the other paths).
    const warmup = r === 0 ? o.firstWarmup : o.warmup;
    const count = Math.ceil(RATE * (perRound + warmup));
    const bodies = f.validBodies.slice(offset, offset + count);
    offset += count;
    for (const [name, url, headers] of paths) {
      const out = join(h.s.dir, `rate-${name}-${r}.json`);
      const input = join(h.s.dir, `rate-${name}-${r}-input.json`);
      writeFileSync(input, JSON.stringify({ url, bodies, headers, rate: RATE, seconds: perRound, warmup, connections: o.connections, out }));
      const p = spawnSync('taskset', ['-c', h.s.loadCores, 'node', driver('rate-probe'), input], { encoding: 'utf8' });
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
  for (const g of Object.values(gates)) await g.stop();
  await stop(near);
  const pct = (xs: number[], p: number) => Math.round(xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!);
  const pcts = (name: string) => {
    const xs = samples[name]!.map((s) => s.us).sort((a, b) => a - b);
    return { p50: pct(xs, 50), p99: pct(xs, 99), p999: pct(xs, 99.9), n: xs.length };
  };
  const direct = { path: 'direct', ...pcts('direct'), ...stats.direct! };
  const rows: Record<string, unknown>[] = [direct];
  c.say(
    '| path | p50 / p99 / p99.9 µs | **added p50 / p99 / p99.9 µs** | added p99 / added p50 | samples (non-200, unanswered) | GC pauses in txgate: minor / major (longest ms) | p99.9 requests in flight during a GC: any / major | requests during a major GC | reloads |',
  );
  c.say('|---|---|---|---|---|---|---|---|---|');
  c.say(
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
    c.say(
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
  c.say(`\nThe p99.9 requests (slowest first), with the GC pauses in txgate that ran while each was in flight (offset from when it was due):\n`);
  for (const t of tails) c.say(t);
  return {
    rate: RATE,
    secondsPerPath: o.seconds,
    warmupSeconds: o.warmup,
    firstWarmupSeconds: o.firstWarmup,
    connections: o.connections,
    rounds: o.rounds,
    rows,
  };
}
