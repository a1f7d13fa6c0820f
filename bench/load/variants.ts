/**
 * bench:load's other sections: the upstream client alone, metrics on against off, 1 against 2
 * worker threads, the sync send beside the plain send, and a saturated soak.
 */
import { spawnSync } from 'node:child_process';
import { medianName, noisyNote, roundsSpread } from '../common/figures.js';
import { median, medianBy, round } from '../common/figures.js';
import { driver } from '../common/paths.js';
import { spread, type LoadContext } from './context.js';
import { rssMB, stop, type Measured } from './harness.js';

/** The upstream client alone: CPU µs per call to the stub, one fresh process per client (see upstream-client.ts). */
export async function client(c: LoadContext): Promise<unknown> {
  const { h } = c;
  c.say('\n## Upstream client alone (CPU µs per call to the stub, client on core ' + h.s.serverCores + ')\n');
  const runClient = (i: number) =>
    spawnSync('taskset', ['-c', h.s.serverCores, 'node', driver('upstream-client'), String(h.port.stub(0)), String(i)], { encoding: 'utf8' });
  const rows: Record<string, Record<string, number>> = {};
  // One fresh process per client (see upstream-client.ts), until one past the last answers {}.
  for (let i = 0; ; i++) {
    const r = runClient(i);
    const m = /RESULT (\{.*\})/.exec(r.stdout ?? '');
    if (m === null) throw new Error(`upstream client bench #${i} failed (status ${r.status}, signal ${r.signal}): ${r.stdout}${r.stderr}`);
    const one = JSON.parse(m[1]!) as Record<string, Record<string, number>>;
    if (Object.keys(one).length === 0) break;
    Object.assign(rows, one);
  }
  c.say('| client | CPU µs/call, 1 at a time | calls/s | CPU µs/call, 16 at a time | calls/s |');
  c.say('|---|---|---|---|---|');
  for (const [name, v] of Object.entries(rows)) c.say(`| ${name} | ${v.cpuUs_c1} | ${v.callsPerSec_c1} | ${v.cpuUs_c16} | ${v.callsPerSec_c16} |`);
  return rows;
}

/** Metrics on against off, on two freshly started txgates, five alternating rounds. */
export async function metrics(c: LoadContext): Promise<unknown> {
  const { h, f } = c;
  const stub0 = `http://127.0.0.1:${h.port.stub(0)}`;
  c.say('\n## Metrics on vs off\n');
  // Both fresh: the main txgate has served every scenario above by now (heap, JIT state, log
  // volume), which alone made "on" look slower than a newly started "off".
  const onGate = await h.gate({ sequencer: stub0, metrics: true });
  const off = await h.gate({ sequencer: stub0, metrics: false });
  c.say('| scenario | metrics on req/s (median of 5) | metrics off req/s (median of 5) | on / off | CPU µs/req on / off |');
  c.say('|---|---|---|---|---|');
  const rows = [];
  // Alternate five rounds and take the medians: the difference sought is smaller than the noise of one run.
  for (const name of ['eth_chainId', 'valid submission'] as const) {
    const on: number[] = [];
    const offs: number[] = [];
    const cpuOn: number[] = [];
    const cpuOff: number[] = [];
    for (let round = 0; round < 5; round++) {
      // Which one goes first alternates too.
      const first = round % 2 === 0;
      const y0 = first ? null : await h.measure(off.child.pid!, off.url, f.scenarios[name]!);
      const x = await h.measure(onGate.child.pid!, onGate.url, f.scenarios[name]!);
      const y = y0 ?? (await h.measure(off.child.pid!, off.url, f.scenarios[name]!));
      on.push(x.rps);
      offs.push(y.rps);
      cpuOn.push(x.cpuUsPerReq);
      cpuOff.push(y.cpuUsPerReq);
    }
    const a = median(on);
    const b = median(offs);
    const ca = median(cpuOn);
    const cb = median(cpuOff);
    rows.push({ scenario: name, on: a, off: b, ratio: round(a / b, 3), cpuOn: ca, cpuOff: cb, rounds: { on, off: offs } });
    c.say(`| ${name} | ${a} | ${b} | ${round(a / b, 3)}x | ${ca} / ${cb} |`);
  }

  await onGate.stop();
  await off.stop();
  return rows;
}

/** 1 against 2 worker threads (wrk shares the 2 cores with the server). */
export async function workers(c: LoadContext): Promise<unknown> {
  const { h, f } = c;
  const stub0 = `http://127.0.0.1:${h.port.stub(0)}`;
  c.say('\n## 1 vs 2 worker threads (wrk shares the 2 cores with the server: read with care)\n');
  const two = await h.gate({ sequencer: stub0, workers: 2 });
  c.say('| scenario | 1 thread req/s | 2 threads req/s | 2 / 1 |');
  c.say('|---|---|---|---|');
  const rows = [];
  for (const name of ['eth_chainId', 'valid submission'] as const) {
    const a = await h.measure(c.gate.child.pid!, c.gate.url, f.scenarios[name]!);
    const b = await h.measure(two.child.pid!, two.url, f.scenarios[name]!);
    rows.push({ scenario: name, one: a.rps, two: b.rps, ratio: round(b.rps / a.rps, 3) });
    c.say(`| ${name} | ${a.rps} | ${b.rps} | ${round(b.rps / a.rps, 3)}x |`);
  }

  await two.stop();
  return rows;
}

/** The sync send against the plain send on the same txgate (forward mode), and the receipt mode on a second one. */
export async function sync(c: LoadContext): Promise<unknown> {
  const { h, f } = c;
  const stub0 = `http://127.0.0.1:${h.port.stub(0)}`;
  // The sync send against the plain send on the same txgate (forward mode), and the receipt
  // mode (the plain send, then eth_getTransactionReceipt) on a second one; the stub includes
  // every transaction at once, so this is the sync path's own cost, not a chain's wait.
  c.say(
    `\n## The sync send beside the plain send (stub answering with the receipt at once; ${h.s.duration} s each, alternating ${h.s.rounds} times: the ${medianName(h.s.rounds)}, each against the plain send of the same round)\n`,
  );
  const fwd = await h.gate({ sequencer: stub0, sync: 'forward' });
  const rcp = await h.gate({ sequencer: stub0, sync: 'receipt' });
  const runs: { plain: Measured; sync: Measured; receipt: Measured }[] = [];
  for (let i = 0; i < h.s.rounds; i++)
    runs.push({
      plain: await h.measure(fwd.child.pid!, fwd.url, f.syncScripts.plain, h.s.duration, h.s.connections, i === 0),
      sync: await h.measure(fwd.child.pid!, fwd.url, f.syncScripts.sync, h.s.duration, h.s.connections, i === 0),
      receipt: await h.measure(rcp.child.pid!, rcp.url, f.syncScripts.sync, h.s.duration, h.s.connections, i === 0),
    });
  c.say(
    `| scenario | req/s | plain send req/s, the same round | / plain send (${medianName(h.s.rounds)}) | all rounds | p50 / p99 / p99.9 µs | CPU µs/req | CPU / plain send, the same round | non-2xx |`,
  );
  c.say('|---|---|---|---|---|---|---|---|---|');
  const rows: Record<string, unknown>[] = [];
  const plainRps = median(runs.map((r) => r.plain.rps));
  c.say(
    `| plain send (eth_sendRawTransaction): the reference | ${plainRps} (median of its ${h.s.rounds} rounds: ${runs.map((r) => r.plain.rps).join(', ')}) | — | 1 (reference) | — | — | ${median(runs.map((r) => r.plain.cpuUsPerReq))} | 1 (reference) | ${runs.reduce((n, r) => n + r.plain.non2xx, 0)} |`,
  );
  rows.push({ scenario: 'plain send (eth_sendRawTransaction)', reference: true, rps: runs.map((r) => r.plain.rps), medianRps: plainRps });
  for (const [name, pick] of [
    ['sync send, forward mode', (r: (typeof runs)[number]) => r.sync],
    ['sync send, receipt mode (send, then one receipt read)', (r: (typeof runs)[number]) => r.receipt],
  ] as const) {
    // Each round's ratio is against the plain send of that same round; the median round's
    // figures are shown together, its plain send beside them.
    const ratios = runs.map((r) => round(pick(r).rps / r.plain.rps, 3));
    const mid = medianBy(runs, (r) => pick(r).rps / r.plain.rps);
    const m = pick(mid);
    const ratio = round(m.rps / mid.plain.rps, 3);
    const cpu = round(m.cpuUsPerReq / mid.plain.cpuUsPerReq, 2);
    const noise = round(roundsSpread(ratios), 3);
    rows.push({ scenario: name, measured: m, plain: mid.plain, ratio, ratios, spread: noise, cpuRatio: cpu });
    c.say(
      `| ${name} | ${m.rps} | ${mid.plain.rps} | ${ratio}x${noisyNote(noise)} | ${spread(ratios)} | ${m.p50} / ${m.p99} / ${m.p999} | ${m.cpuUsPerReq} | ${cpu}x | ${m.non2xx} |`,
    );
  }

  await fwd.stop();
  await rcp.stop();
  return rows;
}

/** A saturated soak: what is accepted, what is refused at once, and txgate's memory. */
export async function soak(c: LoadContext, seconds: number): Promise<unknown> {
  const { h, f } = c;
  c.say(`\n## Saturation (${seconds} s after a 20-s saturated warm-up, 512 connections, stub answering after 50 ms, maxInFlight 256)\n`);
  const slow = await h.stub(1, h.s.loadCores, 50);
  const g = await h.gate({ sequencer: `http://127.0.0.1:${h.port.stub(1)}`, maxInFlight: 256 });
  const pid = g.child.pid!;
  const rss: number[] = [];
  const sampler = setInterval(() => rss.push(rssMB(pid)), 1000);
  // Warm up saturated first: V8 grows its heap to a steady state under load; what must not
  // happen is growth after that (a leak).
  await h.wrk(g.url, f.scenarios['valid submission']!, 20, 512);
  const rss0 = rssMB(pid);
  const r = await h.wrk(g.url, f.scenarios['valid submission']!, seconds, 512);
  clearInterval(sampler);
  const rss1 = rssMB(pid);
  const ok = r.requests - r.non2xx;
  const soak = {
    requests: r.requests,
    accepted: ok,
    overloaded503: r.non2xx,
    rps: Math.round(r.requests / (r.duration_us / 1e6)),
    p50: r.p50,
    p99: r.p99,
    rssStartMB: round(rss0, 1),
    rssEndMB: round(rss1, 1),
    rssMaxMB: round(Math.max(...rss), 1),
    growthMB: round(rss1 - rss0, 1),
  };

  c.say('| requests | accepted (≤ 256 in flight, 50 ms each) | 503 overloaded | p50 / p99 µs | RSS start → end (max) MB | growth MB |');
  c.say('|---|---|---|---|---|---|');
  c.say(
    `| ${soak.requests} | ${soak.accepted} | ${soak.overloaded503} | ${soak.p50} / ${soak.p99} | ${soak.rssStartMB} → ${soak.rssEndMB} (${soak.rssMaxMB}) | ${soak.growthMB} |`,
  );
  await g.stop();
  await stop(slow);
  return soak;
}
