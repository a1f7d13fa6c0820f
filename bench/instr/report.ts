/**
 * bench:instr's rendering: the console lines as the run goes, the Markdown tables, the picture
 * and the JSON, from what was measured. Nothing is measured here.
 */
import { barNote, medianName } from '../common/figures.js';
import { round } from '../common/figures.js';
import { pairedConfidence, type StageCost } from '../common/stage-costs.js';
import { stackedBarsSvg, type Bar } from '../common/svg.js';
import type { TopFunction } from '../common/callgrind-top.js';
import { pct, type Measured } from './measure.js';
import type { Scenario } from './scenarios.js';

export const k = (n: number) => `${round(n / 1000, 1)}k`;
const spreadPct = (m: Measured) => pct(m.spread);
const fnCell = (t: TopFunction) => `\`${t.fn.replace(/\|/g, '\\|')}\``;

/** A paired difference: its median and range over the rounds. */
export interface Paired {
  readonly median: number;
  readonly lo: number;
  readonly hi: number;
}

/** The run's settings as the report names them. */
export interface ReportSettings {
  readonly requests: number;
  readonly warmup: number;
  readonly rounds: number;
  readonly connections: number;
  readonly maxSpread: number;
  readonly retries: number;
  readonly idleS: number;
  readonly top: number;
}

export const idleLine = (server: string, perSecond: number, seconds: number) =>
  `${server.padEnd(6)} idle: ${k(perSecond)} instructions per second (${round(seconds, 1)} s)`;

/** A scenario's line as soon as it is measured. */
export function measuredLine(m: Measured, maxSpread: number): string {
  const noisy =
    m.spread > maxSpread ? `  NOISY: rounds spread ${pct(m.spread)} > ${pct(maxSpread)}${m.remeasured > 0 ? ` after ${m.remeasured} re-measured` : ''}` : '';
  return `${m.server.padEnd(6)} ${m.scenario.padEnd(46)} ${k(m.median).padStart(7)} instr/req (rounds ${m.rounds.map((r) => `${k(r.perReq)}${r.jitPerReq >= 50 ? ` +${k(r.jitPerReq)} JIT` : ''} in ${round(r.seconds, 1)} s`).join(', ')}), GC ${k(m.gcPerReq)}/req${noisy}`;
}

/** What the per-stage table shows. */
export interface StageTable {
  readonly echo: Measured;
  readonly costs: readonly StageCost[];
  /** The measured exit of each stage, and the request that exits there. */
  readonly exitOf: (stage: string) => { readonly m: Measured; readonly request: string };
  readonly sender: { readonly scenario: string; readonly m: Measured; readonly overFee: number; readonly paired: Paired };
  readonly wsForward?: { readonly scenario: string; readonly m: Measured; readonly cost: number; readonly paired: Paired };
}

export function stageTable(t: StageTable, o: ReportSettings): string[] {
  const range = (p: Paired) => `${k(p.median)} [${k(p.lo)} … ${k(p.hi)}]`;
  const lines = [
    `\n## txgate per stage (instructions per request; paired rounds: each stage's exit less the exit before it, round by round)\n`,
    `Stage cost: the exits made non-decreasing in pipeline order (isotonic fit), so no stage is negative; paired: the median of the ${o.rounds} paired differences and their range, which holds the true median difference with ${round(pairedConfidence(o.rounds) * 100, 1)}% confidence. A stage whose range reaches zero is not resolved by this run.\n`,
    '| stage | request exiting there | exit instr / req (spread) | **stage cost** | paired difference: median [range] | |',
    '|---|---|---|---|---|---|',
    `| front end (bare uWS read and write) | echo | ${k(t.echo.median)} (${spreadPct(t.echo)}) | **${k(t.echo.median)}** | | |`,
  ];
  for (const c of t.costs) {
    const { m, request } = t.exitOf(c.stage);
    const note = [
      c.pooled ? 'exit below the one before: pooled with it' : '',
      c.resolved ? '' : 'not resolved',
      m.spread > o.maxSpread ? `rounds spread > ${pct(o.maxSpread)}` : '',
    ]
      .filter((x) => x !== '')
      .join('; ');
    lines.push(`| ${c.stage} | ${request} | ${k(c.exit)} (${spreadPct(m)}) | **${k(c.cost)}** | ${range(c.paired)} | ${note} |`);
  }
  const s = t.sender;
  lines.push(
    `| sender, with an allow-list (recovers the sender) | ${s.scenario} | ${k(s.m.median)} (${spreadPct(s.m)}) | **${k(s.overFee)}** over the fee exit | ${range(s.paired)} | |`,
  );
  const w = t.wsForward;
  if (w !== undefined)
    lines.push(
      `| forward to a ws:// sequencer (instead of HTTP) | ${w.scenario} | ${k(w.m.median)} (${spreadPct(w.m)}) | **${k(w.cost)}** over the rate_limit exit | ${range(w.paired)} | |`,
    );
  return lines;
}

/** What the main report shows. */
export interface MainReport {
  readonly results: readonly Measured[];
  readonly main: readonly Scenario[];
  readonly leftOut: readonly string[];
  readonly allocated: ReadonlyMap<string, number>;
  readonly idle: ReadonlyMap<string, { perSecond: number; top?: readonly TopFunction[] }>;
}

/** The main tables: instructions per request by scenario, garbage collection, idle work, and with --top the functions. */
export function mainTables(r: MainReport, o: ReportSettings): string[] {
  const out: string[] = [];
  const say = (l: string) => out.push(l);
  const echo = r.results.find((x) => x.server === 'echo')!;
  const of = (server: string, scenario: string) => r.results.find((x) => x.server === server && x.scenario === scenario);
  say(
    `\n## Instructions per request (callgrind; median of ${o.rounds} rounds of ${o.requests} after ${o.warmup} warm-up rounds; ${o.connections} connections; rounds spreading over ${pct(o.maxSpread)} measured again up to ${o.retries} times; TurboFan compilations left out of each round and shown under GC; collections shared out over a server's rounds by the bytes each scenario allocates, a scenario's own mean where that is not measured)\n`,
  );
  say(`Bare uWS echo: ${k(echo.median)} instructions per request (rounds spread ${spreadPct(echo)}).\n`);
  /** A median as printed in the table: flagged where its rounds spread past --max-spread. */
  const flagNoisy = (m: Measured) => (m.spread > o.maxSpread ? `${k(m.median)} ⚠ noisy` : k(m.median));
  say('| scenario | floor | txgate | txgate / echo | floor / echo | **floor / txgate** | spread of rounds floor / txgate |');
  say('|---|---|---|---|---|---|---|');
  for (const s of r.main) {
    const g = of('txgate', s.name);
    if (g === undefined) continue;
    const f = of('floor', s.name);
    say(
      `| ${s.name} | ${f ? flagNoisy(f) : '—'} | ${flagNoisy(g)} | ${round(g.median / echo.median, 2)}x | ${f ? `${round(f.median / echo.median, 2)}x` : '—'} | **${f ? `${round(f.median / g.median, 3)}` : '—'}** | ${f ? spreadPct(f) : '—'} / ${spreadPct(g)} |`,
    );
  }
  if (r.leftOut.length > 0) say(`\nLeft out (their answers were not the scenario's in every re-measured round): ${r.leftOut.join(', ')}.`);
  const noisy = r.results.filter((x) => x.spread > o.maxSpread);
  if (noisy.length > 0)
    say(`\nRounds still spread over ${pct(o.maxSpread)} after re-measuring: ${noisy.map((x) => `${x.server} / ${x.scenario} ${spreadPct(x)}`).join(', ')}.`);
  say('\n## Garbage collection per request (the same rounds)\n');
  say(
    '| server | scenario | KiB allocated / req | GC instructions / req (mean) | GC instructions / 10k req | scavenges / 10k req | full GCs / 10k req | worst round / median | JIT compilation / req (mean, left out) |',
  );
  say('|---|---|---|---|---|---|---|---|---|');
  for (const x of r.results) {
    const bytes = r.allocated.get(`${x.server}/${x.scenario}`) ?? 0;
    const jit = x.rounds.reduce((a, y) => a + y.jitPerReq * y.n, 0) / x.rounds.reduce((a, y) => a + y.n, 0);
    say(
      `| ${x.server} | ${x.scenario} | ${Number.isNaN(bytes) ? 'not measured' : round(bytes / 1024, 2)} | ${k(x.gcPerReq)} | ${round((x.gcPerReq * 10_000) / 1e6, 1)}M | ${round(x.scavengesPer10k, 1)} | ${round(x.majorsPer10k, 2)} | ${round(x.max / x.median, 3)} | ${k(jit)} |`,
    );
  }
  if (r.idle.size > 0) {
    say(`\n## Background work while idle (${o.idleS} s after the measured rounds; every round counts it by its wall time)\n`);
    say('| server | instructions per second idle |');
    say('|---|---:|');
    for (const [name, v] of r.idle) say(`| ${name} | ${k(v.perSecond)} |`);
    for (const [name, v] of r.idle) {
      if (v.top === undefined) continue;
      say(`\n### ${name} idle: self instructions per second by function\n`);
      say('| function | instr / s |');
      say('|---|---:|');
      for (const t of v.top) say(`| ${fnCell(t)} | ${t.perCall} |`);
    }
  }
  if (o.top > 0) {
    say(`\n## Self instructions per request by function (--top ${o.top}: the median round of each scenario; node ran with --perf-basic-prof)\n`);
    for (const x of r.results) {
      const mid = [...x.rounds].filter((y) => y.top !== undefined).sort((a, b) => a.perReq - b.perReq)[x.rounds.length >> 1];
      if (mid?.top === undefined) continue;
      say(`### ${x.server}: ${x.scenario} (${k(mid.perReq)} instructions per request)\n`);
      say('| function | instr / req |');
      say('|---|---:|');
      for (const t of mid.top) say(`| ${fnCell(t)} | ${t.perCall} |`);
      say('');
    }
  }
  return out;
}

/** The picture: the echo, the floor and txgate on a valid submission, txgate's bar split by stage. */
export function instrSvg(r: MainReport, costs: readonly StageCost[], o: ReportSettings): string {
  const echo = r.results.find((x) => x.server === 'echo')!;
  const of = (server: string, scenario: string) => r.results.find((x) => x.server === server && x.scenario === scenario);
  /** A bar's note: the median, flagged where its rounds spread past --max-spread (the figure is then not to be read alone). */
  const noted = (m: { median: number; spread: number }, text = k(m.median)) => barNote(text, m.spread, o.maxSpread);
  const bars: Bar[] = [{ label: 'bare uWS echo (eth_chainId)', segments: [{ label: 'front end (echo)', value: echo.median }], note: noted(echo) }];
  for (const s of r.main) {
    const f = of('floor', s.name);
    if (f !== undefined && (s.name === 'valid submission' || costs.length === 0))
      bars.push({ label: `floor, ${s.name}`, segments: [{ label: 'floor', value: f.median }], note: noted(f) });
  }
  if (costs.length > 0) {
    const last = costs.at(-1)!;
    const sub = of('txgate', 'valid submission');
    const text = `${k(last.fitted)} (measured ${k(last.exit)})`;
    bars.push({
      label: 'txgate, valid submission, by stage',
      segments: [{ label: 'front end (echo)', value: echo.median }, ...costs.map((c) => ({ label: c.stage, value: c.cost }))],
      note: sub !== undefined ? noted(sub, text) : text,
    });
  }
  for (const s of r.main) {
    const g = of('txgate', s.name);
    if (g !== undefined && !(costs.length > 0 && s.name === 'valid submission'))
      bars.push({ label: `txgate, ${s.name}`, segments: [{ label: 'txgate', value: g.median }], note: noted(g) });
  }
  return stackedBarsSvg({
    title: `Instructions per request (callgrind, ${medianName(o.rounds)} of ${o.requests}; ${new Date().toISOString().slice(0, 10)})`,
    unit: 'instructions per request',
    bars,
  });
}
