/**
 * bench:load's throughput (txgate against the echo and the floor, scenario by scenario, and the
 * variants of a valid submission with --full), its picture, and the added latency at ~1,000 req/s.
 */
import { existsSync } from 'node:fs';
import { SYSTEM_SECP256K1_PATH } from '../../src/base/native.js';
import { flagged, medianName, noisyNote, roundsSpread } from '../common/figures.js';
import { round } from '../common/figures.js';
import { stackedBarsSvg, type Bar } from '../common/svg.js';
import { spread, type LoadContext } from './context.js';
import { JSON_CT } from './fixtures.js';
import { stop, type Compared, type GateOptions, type Measured } from './harness.js';

/** The scenarios the conforming floor answers as txgate does. */
const FLOOR_SCENARIOS = new Set(['eth_chainId', '401 unauthorized', '402 fee_rejected', 'valid submission']);

export interface ThroughputRow {
  readonly scenario: string;
  readonly txgate: Measured;
  readonly echo: Measured;
  readonly ratio: number;
  readonly ratios: number[];
  readonly spread: number;
  readonly cpuRatio: number;
  readonly floor?: Measured;
  readonly floorRatios?: number[];
}

function throughputRow(c: LoadContext, name: string, x: Compared): ThroughputRow {
  const { txgate: t, echo: e, ratio, ratios } = x;
  c.say(
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
    ...(x.floor !== undefined ? { floor: x.floor, floorRatios: x.floorRatios! } : {}),
  };
}

export async function throughput(c: LoadContext): Promise<ThroughputRow[]> {
  const { h, f, gate } = c;
  const { serverCores, loadCores, connections, duration, rounds } = h.s;
  c.say(
    `\n## Throughput (1 server thread on core ${serverCores}; wrk -t1 -c${connections} on core ${loadCores}; ${duration} s each, echo (floor) and txgate alternating ${rounds} times: the ${medianName(rounds)}, by txgate / echo; every figure of a row from that one round)\n`,
  );
  c.say(
    '| scenario | txgate req/s | echo req/s | ratio | ratio, all rounds | txgate p50 / p99 / p99.9 µs | echo p50 / p99 / p99.9 µs | txgate CPU µs/req | echo CPU µs/req | non-2xx |',
  );
  c.say('|---|---|---|---|---|---|---|---|---|---|');
  const rows: ThroughputRow[] = [];
  for (const [name, script] of Object.entries(f.scenarios)) {
    if (!c.wantScenario(name)) continue;
    rows.push(throughputRow(c, name, await h.compare(gate.child.pid!, gate.url, script, FLOOR_SCENARIOS.has(name))));
  }
  // Valid submissions with other options: busy polling (CPU while idle), the recover signature
  // check (every sender recovered), and the system libsecp256k1 (when built: npm run
  // build:secp256k1).
  if (c.full && c.wantScenario('valid submission')) {
    const sequencer = `http://127.0.0.1:${h.port.stub(0)}`;
    const variants: [string, GateOptions][] = [
      ['valid submission, busyPoll on', { sequencer, busyPoll: true }],
      ['valid submission, signature check recover', { sequencer, signature: 'recover' }],
    ];
    if (existsSync(SYSTEM_SECP256K1_PATH)) variants.push(['valid submission, system libsecp256k1', { sequencer, secp256k1: 'system' }]);
    for (const [name, o] of variants) {
      const g = await h.gate(o);
      rows.push(throughputRow(c, name, await h.compare(g.child.pid!, g.url, f.scenarios['valid submission']!)));
      await g.stop();
    }
  }
  floorTable(c, rows);
  return rows;
}

function floorTable(c: LoadContext, rows: readonly ThroughputRow[]): void {
  const withFloor = rows.filter((r) => r.floor !== undefined);
  if (withFloor.length === 0) return;
  c.say('\n## Against the conforming floor (the same rounds: echo, floor, txgate)\n');
  c.say(
    "The floor (`bench/servers/floor-server.ts`) is one flat uWS handler doing only what the contract makes any implementation do for these requests: read the headers, decode and JSON.parse the body, check the envelope, echo the id, send Content-Type and X-Request-Id; for a submission, hash the key and look it up (401: the error body and a log line), decode and verify the transaction (txgate's decoder, curve check as txgate's default), check the tip (402), forward it with undici (txgate's HttpUpstream), check the hash, answer, and log a request and an audit line.\n",
  );
  c.say(
    '| scenario | echo req/s | floor req/s | txgate req/s | floor / echo | floor / echo, all rounds | txgate / echo | **txgate / floor** | CPU µs/req echo / floor / txgate |',
  );
  c.say('|---|---|---|---|---|---|---|---|---|');
  for (const r of withFloor) {
    const floor = r.floor!;
    const fr = round(floor.rps / r.echo.rps, 3);
    c.say(
      `| ${r.scenario} | ${r.echo.rps} | ${floor.rps} | ${r.txgate.rps} | ${fr}x | ${spread(r.floorRatios!)} | ${r.ratio}x | **${round(r.txgate.rps / floor.rps, 3)}x** | ${r.echo.cpuUsPerReq} / ${floor.cpuUsPerReq} / ${r.txgate.cpuUsPerReq} |`,
    );
  }
}

/** The picture: latency percentiles of each throughput scenario, txgate against the echo (and the floor) in the same round; each bar runs to p99.9, split at p50 and p99. */
export function latencySvg(rows: readonly ThroughputRow[], o: { connections: number; rounds: number; duration: number }): string {
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
  for (const r of rows) {
    bars.push(bar(`${r.scenario}: echo`, r.echo));
    if (r.floor !== undefined) bars.push(bar(`${r.scenario}: floor`, r.floor));
    bars.push(bar(`${r.scenario}: txgate`, r.txgate));
  }
  return stackedBarsSvg({
    title: `Latency under wrk -c${o.connections} (the ${medianName(o.rounds)}, ${o.duration} s each; ${new Date().toISOString().slice(0, 10)})`,
    unit: 'latency, µs (p50 / p99 / p99.9)',
    bars,
    format: (v) => `${Math.round(v)}`,
  });
}

/**
 * The latency txgate adds at ~1,000 req/s. The client is on the load core. With the stub on the
 * server's core, both paths cross between the cores twice (client → server core → client) and
 * differ only by txgate's hop, which is what "added by txgate" means. With the stub on the
 * client's core the direct path never leaves one core and the difference also counts two
 * cross-core wake-ups (shown for comparison, with --full).
 */
export async function latency(c: LoadContext): Promise<Record<string, unknown>[]> {
  const { h, f, gate } = c;
  const { serverCores, loadCores, duration } = h.s;
  c.say('\n## Added latency at ~1,000 req/s (client→txgate→stub minus client→stub)\n');
  const bodies = f.validBodies.slice(0, 6000);
  const near = await h.stub(2, serverCores);
  const nearUrl = `http://127.0.0.1:${h.port.stub(2)}/`;
  const sequencer = `http://127.0.0.1:${h.port.stub(2)}`;
  const g2 = await h.gate({ sequencer });
  // The quick run: the default configuration with the stub on the server's core alone.
  const g3 = c.full ? await h.gate({ sequencer, busyPoll: true }) : undefined;
  const g4 = c.full ? await h.gate({ sequencer, signature: 'recover' }) : undefined;
  const headers = { ...JSON_CT, 'X-Api-Key': f.keys.load };
  const rows: Record<string, unknown>[] = [];
  c.say(
    `| placement (client on core ${loadCores}, txgate on core ${serverCores}) | client → stub p50 / p99 µs | client → txgate → stub p50 / p99 µs | **added by txgate p50 / p99 µs** | samples |`,
  );
  c.say('|---|---|---|---|---|');
  const placements: (readonly [string, string, string])[] = [[`stub on the server's core ${serverCores}`, nearUrl, g2.url]];
  if (g3 !== undefined && g4 !== undefined)
    placements.push(
      [`stub on the server's core ${serverCores}, busyPoll on`, nearUrl, g3.url],
      [`stub on the server's core ${serverCores}, signature check recover`, nearUrl, g4.url],
      [`stub on the client's core ${loadCores}`, `http://127.0.0.1:${h.port.stub(0)}/`, gate.url],
    );
  for (const [name, stubUrl, gateUrl] of placements) {
    const direct = h.probe(stubUrl, bodies, JSON_CT, 1000, duration);
    const via = h.probe(gateUrl, bodies, headers, 1000, duration);
    const added = { p50: via.p50 - direct.p50, p99: via.p99 - direct.p99 };
    rows.push({ placement: name, direct, via, added });
    c.say(`| ${name} | ${direct.p50} / ${direct.p99} | ${via.p50} / ${via.p99} | **${flagged(added.p50)} / ${flagged(added.p99)}** | ${via.n} |`);
  }
  for (const g of [g2, g3, g4]) if (g !== undefined) await g.stop();
  await stop(near);
  return rows;
}
