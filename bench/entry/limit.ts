/**
 * `npm run bench:limit`: the hot path against its own limit. In one callgrind run, beside txgate
 * and the bare uWS echo, each irreducible part of a scenario measured alone by the parts server
 * (bench/servers/limit-server.ts) with the same requests: the transport, the envelope read,
 * decode and signature check, the account lookup, the forward and the audit lines. Per scenario:
 * each part, their sum, txgate, txgate / sum, txgate / echo, and what remains named by stage
 * from txgate's per-stage exits (bench:instr's, measured in the same run).
 *
 * The measuring is bench:instr's (bench/instr/: the servers under callgrind, rounds between
 * `callgrind_control -z` and `-d`, interleaved, noisy rounds measured again); every server runs
 * with fixed V8 seeds and young generation (`NODE_FLAGS`), so that two runs of one tree differ
 * by less. Needs valgrind; installs nothing. Loopback only.
 */
import { spawnSync } from 'node:child_process';
import { keySha256 } from '../../src/accounts/keys.js';
import { RESULTS_DIR } from '../common/paths.js';
import { round } from '../common/figures.js';
import { startBench } from '../common/bench-run.js';
import { server } from '../common/paths.js';
import { stageCosts, type StageCost } from '../common/stage-costs.js';
import { resultsJson } from '../common/results-schema.js';
import { startStub } from '../servers/stub-sequencer.js';
import type { Part, PartSetup } from '../servers/limit-server.js';
import { Callgrind, needCallgrind, type Server } from '../instr/callgrind.js';
import { Driver } from '../instr/drive.js';
import { Measure, type Measured } from '../instr/measure.js';
import { measuredLine } from '../instr/report.js';
import { accounts, CHAINS, keys, LANE_KEY, LANE_KEY_FILE, MAIN, STAGES, txgateConfig, type Scenario } from '../instr/scenarios.js';
import { askOnce, LIMIT, partName, partsOf, type Captured } from '../limit/parts.js';
import { limitRow, limitTables, type LimitRow } from '../limit/report.js';
import { NODE_FLAGS } from '../limit/flags.js';

const run = startBench('bench:limit', 'The hot path against its limit: txgate beside each irreducible part of a scenario, alone, in one callgrind run.', {
  requests: { kind: 'int', quick: 300, full: 2000, help: 'requests per round' },
  warmup: { kind: 'int', quick: 16, full: 16, help: 'unmeasured rounds per scenario, uninstrumented' },
  rounds: { kind: 'int', median: true, quick: 3, full: 5, help: 'measured rounds per scenario, an odd number ≥ 3 (their median is the figure)' },
  connections: { kind: 'int', quick: 8, help: 'connections, one request in flight on each' },
  scenarios: {
    kind: 'list',
    choices: LIMIT.map((l) => l.name),
    quick: ['eth_chainId', '401 unauthorized', 'valid submission', 'valid submission to a WebSocket sequencer'],
    full: LIMIT.map((l) => l.name),
    help: 'the scenarios measured',
  },
  'no-stages': { kind: 'flag', help: "skip txgate's per-stage exits (no 'what remains by stage')" },
  'max-spread': {
    kind: 'number',
    min: 0.1,
    quick: 10,
    full: 5,
    help: "bound on a scenario's rounds' spread, % of their median: rounds beyond it are measured again",
  },
  retries: {
    kind: 'int',
    min: 0,
    quick: 2,
    full: 3,
    help: "times a scenario's noisy rounds (or rounds in which TurboFan compiled more than 5% of the count) are measured again",
  },
  'port-base': {
    kind: 'int',
    min: 1024,
    quick: 18350,
    help: 'first of the loopback ports used (the echo PORT, txgate PORT+2 and PORT+3, the parts server PORT+4 and its parts PORT+10.., the stubs PORT+100..PORT+106): two runs at once need bases 200 apart',
  },
});
const opt = run.opt;
needCallgrind('bench:limit');
const settings = {
  requests: opt.requests,
  warmup: opt.warmup,
  rounds: opt.rounds,
  maxSpread: opt['max-spread'] / 100,
  retries: opt.retries,
  idleS: 0,
  maxJit: 0.05,
  interleaveWarmup: true,
};
const chosen = LIMIT.filter((l) => opt.scenarios === undefined || opt.scenarios.includes(l.name));
const scenarioOf = (name: string) => MAIN.find((s) => s.name === name)!;
const cg = new Callgrind(run.tmp, run.children, undefined, 0, NODE_FLAGS);
const driver = new Driver(opt.connections);
const measure = new Measure(settings, cg, driver, {
  idle: () => undefined,
  measured: (m) => process.stdout.write(measuredLine(m, settings.maxSpread) + '\n'),
  note: (line) => process.stderr.write(line + '\n'),
  leftOut: (_what, line) => process.stdout.write(line + '\n'),
});

// --- the servers: the stubs outside callgrind, the echo, txgate and the parts server under it ---
const BASE = opt['port-base'];
const STUB = BASE + 100;
const chains = new Set<keyof typeof CHAINS>(['receipt', 'tracked', 'ws', 'laneNotOurs']);
await startStub({ port: STUB, chainId: 4663, holder: null, children: run.children });
for (const c of chains) await startStub({ port: STUB + CHAINS[c].stub, chainId: CHAINS[c].chainId, holder: null, children: run.children });
const started = Date.now();
process.stderr.write(
  `valgrind ${spawnSync('valgrind', ['--version'], { encoding: 'utf8' }).stdout.trim()}, node ${process.version} ${NODE_FLAGS.join(' ')}; ${opt.requests} requests a round, ${opt.warmup} warm-up + ${opt.rounds} measured rounds, ${opt.connections} connections\n`,
);
const echoP = cg.start('echo', { port: BASE, args: [server('echo-server'), String(BASE)] });
const txgateP = cg.start('txgate', {
  port: BASE + 2,
  txgate: {
    config: (dir) => txgateConfig({ stub: STUB, port: BASE + 2, lane4663: false, chains }, dir),
    accounts: accounts(false, true),
    files: { [LANE_KEY_FILE]: LANE_KEY },
    parent: run.tmp,
  },
});
const partsP = cg.start('parts', { port: BASE + 4, args: [server('limit-server'), String(BASE + 4)] });
for (const p of [echoP, txgateP, partsP]) p.catch(() => undefined);

// txgate's answer and log lines for one request of each scenario: what the parts server replays.
const txgate = await txgateP;
let logged: string[] = [];
txgate.child.stdout!.on('data', (d: Buffer) => {
  for (const l of d.toString().split('\n')) if (l.startsWith('{') && !l.includes(' gc=')) logged.push(l);
});
const captured = new Map<string, Captured>();
for (const l of chosen) {
  logged = [];
  const answer = await askOnce(txgate.port, scenarioOf(l.name));
  await new Promise((r) => setTimeout(r, 500)); // the log sink's batch (20 ms natively; slower under callgrind)
  captured.set(l.name, { ...answer, lines: logged.filter((x) => x.includes('"reqId"')) });
}
let port = BASE + 10;
const setups: PartSetup[] = [];
const partScenarios: Scenario[] = [];
for (const l of chosen) {
  const { setups: s, scenarios } = partsOf(l, scenarioOf(l.name), captured.get(l.name)!, { port, stubBase: STUB, keyHashes: [keySha256(keys.load)] });
  port += s.length;
  setups.push(...s);
  partScenarios.push(...scenarios);
}
const parts = await partsP;
const set = await fetch(`http://127.0.0.1:${parts.port}/setup`, { method: 'POST', body: JSON.stringify({ parts: setups }) });
if (set.status !== 200) {
  process.stderr.write(`bench:limit: the parts server refused its setup: ${await set.text()}\n`);
  process.exit(1);
}

// --- measuring, each server in turn ------------------------------------------------------------
const measureAll = async (srv: Server, scenarios: readonly Scenario[]) => {
  const m = await measure.set(srv, scenarios);
  driver.closeLanes();
  await srv.stop();
  return m;
};
const echo = (await measureAll(await echoP, [MAIN[0]!]))[0];
if (echo === undefined) {
  process.stderr.write(`bench:limit: the bare uWS echo on port ${BASE} misanswered in every round (another process on the port?): try another --port-base\n`);
  process.exit(1);
}
const stageSet: Scenario[] = opt['no-stages'] ? [] : STAGES.filter((s) => s.same === undefined).map((s) => s as Scenario);
const txgateM = await measureAll(txgate, [
  ...chosen.map((l) => scenarioOf(l.name)),
  ...stageSet,
  ...(opt['no-stages']
    ? []
    : [scenarioOf('401 unauthorized'), scenarioOf('402 fee_rejected'), scenarioOf('valid submission')].filter((s) => !chosen.some((l) => l.name === s.name))),
]);
const partsM = await measureAll(parts, partScenarios);

// --- the report ---------------------------------------------------------------------------------
const of = (ms: readonly Measured[], name: string) => ms.find((m) => m.scenario === name);
// Without the collector, as the guard counts (docs/performance.md, "The guard"): a round's
// perReq carries the measurement's mean share of it (gcPerReq), which is taken out again.
const roundsOf = (m: Measured | undefined) => (m === undefined ? [] : m.rounds.map((r) => r.perReq - m.gcPerReq));
let stages: StageCost[] = [];
let wsForward: number | undefined;
if (!opt['no-stages']) {
  const exitOf = (s: (typeof STAGES)[number]) => of(txgateM, s.same ?? s.name);
  stages = stageCosts(
    { stage: 'front end', rounds: roundsOf(echo) },
    STAGES.map((s) => ({ stage: s.stage, rounds: roundsOf(exitOf(s)) })),
  );
  const ws = of(txgateM, 'valid submission to a WebSocket sequencer');
  const limited = exitOf(STAGES.find((s) => s.stage === 'rate_limit')!);
  if (ws !== undefined && limited !== undefined) wsForward = Math.max(0, ws.median - limited.median);
}
const rows: LimitRow[] = chosen.flatMap((l) => {
  const t = of(txgateM, l.name);
  if (t === undefined) return [];
  const partRounds = new Map<Part, readonly number[]>();
  for (const p of ['transport', ...l.parts] as Part[]) {
    const m = of(partsM, partName(l.name, p));
    if (m !== undefined) partRounds.set(p, roundsOf(m));
  }
  if (!partRounds.has('transport')) return [];
  const over = l.over === undefined ? undefined : of(txgateM, l.over)?.median;
  return [
    limitRow({
      l,
      txgate: roundsOf(t),
      echo: roundsOf(echo),
      parts: partRounds,
      stages,
      ...(wsForward !== undefined ? { wsForward } : {}),
      ...(over !== undefined ? { overMedian: over } : {}),
    }),
  ];
});
const tables = limitTables(rows);
process.stdout.write('\n' + tables.join('\n') + '\n');
const minutes = round((Date.now() - started) / 60_000, 1);
const header = [
  '# bench:limit: the hot path against its limit',
  '',
  `Instructions per request under callgrind without the collector's, median of ${opt.rounds} rounds of ${opt.requests} requests (${opt.warmup} warm-up), ${opt.connections} connections; node ${process.version} ${NODE_FLAGS.join(' ')}. A part is its port's count less the transport's in the same round.`,
  '',
];
const mdPath = run.write('limit.md', [...header, ...tables, '', `(${minutes} min)`].join('\n') + '\n');
run.write(
  'limit.json',
  resultsJson('limit', {
    node: process.version,
    date: new Date().toISOString(),
    requests: opt.requests,
    warmup: opt.warmup,
    rounds: opt.rounds,
    maxSpread: settings.maxSpread,
    nodeFlags: [...NODE_FLAGS],
    echo: { median: echo.median, spread: echo.spread },
    rows,
    results: [echo, ...txgateM, ...partsM].map((m) => ({ server: m.server, scenario: m.scenario, median: m.median, min: m.min, max: m.max, spread: m.spread })),
    stageCosts: stages,
  }),
);
process.stdout.write(`\n(${minutes} min) written to ${mdPath} and limit.json${run.outDir === RESULTS_DIR ? '' : ' (--save writes bench/results/)'}\n`);
process.exit(0);
