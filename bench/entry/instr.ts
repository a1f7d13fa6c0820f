/**
 * `npm run bench:instr`: instructions per request, counted by valgrind's callgrind, the primary
 * performance figure of this project. Instruction counts repeat within 1–2% whatever else the
 * host does, where req/s on a shared machine swings ±30%.
 *
 * Each server runs under callgrind in its own process (node --single-threaded, so compiler and
 * GC threads do not make tier-up depend on time): the bare uWS echo, the conforming floor
 * (bench/servers/floor-server.ts) and txgate from its CLI with a config (one thread, dedup off,
 * metrics on, logs at info to a pipe this bench drains). The stub sequencers run outside,
 * uninstrumented. For every scenario (the table in bench/instr/scenarios.ts): `--warmup` rounds
 * of `--requests` requests (8 connections, one request in flight on each), then `--rounds`
 * measured ones, each between `callgrind_control -z` and `-d` (bench/instr/measure.ts). Printed
 * per scenario (bench/instr/report.ts): the median instructions per request and the spread of
 * the rounds, GC instructions per request (v8::internal::Heap::CollectGarbage, inclusive), bytes
 * allocated per request and collections per 10,000 requests (--trace-gc-nvp), each as a ratio to
 * the echo and txgate beside the floor. The WebSocket transport's scenarios (txgate only) send the
 * same requests as frames on one connection with as many in flight as the HTTP scenarios have
 * connections. Then txgate per stage: requests that exit at consecutive stages, each stage's
 * cost the difference to the exit before it.
 *
 * Needs valgrind (Debian: apt-get install -y valgrind); installs nothing. Loopback only.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { differsFrom } from '../common/figures.js';
import { startBench } from '../common/bench-run.js';
import { median, round } from '../common/figures.js';
import { RESULTS_DIR } from '../common/paths.js';
import { server } from '../common/paths.js';
import { stageCosts, type StageCost } from '../common/stage-costs.js';
import { startStub } from '../servers/stub-sequencer.js';
import { Callgrind, needCallgrind, type ServerDef } from '../instr/callgrind.js';
import { Driver } from '../instr/drive.js';
import { gcByAllocation, Measure, type Measured } from '../instr/measure.js';
import { idleLine, instrSvg, mainTables, measuredLine, stageTable, type MainReport, type Paired, type ReportSettings } from '../instr/report.js';
import {
  accounts,
  CHAIN_OF,
  CHAINS,
  FLOOR,
  keys,
  LANE_CONTROLLER,
  LANE_KEY,
  LANE_KEY_FILE,
  MAIN,
  MIN_TIP,
  SENDER,
  STAGES,
  txgateConfig,
  WS_SEQUENCER,
  type Scenario,
} from '../instr/scenarios.js';
import { resultsJson } from '../common/results-schema.js';
import { NODE_FLAGS } from '../limit/flags.js';

/** The scenarios that need their own chain and are not in the default configuration. */
const LANE_SCENARIOS = new Set([
  'valid submission, express lane not ours',
  'valid submission, express lane ours',
  'valid submission, express lane off',
  'valid submission, conditions off',
  'valid submission, conditions on',
  'conditional submission, empty options',
  'valid submission, untracked chain',
]);
const run = startBench('bench:instr', 'Instructions per request under callgrind: the bare uWS echo, the conforming floor and txgate, then txgate per stage.', {
  requests: { kind: 'int', quick: 400, full: 2000, help: 'requests per round' },
  warmup: { kind: 'int', quick: 6, full: 3, help: 'unmeasured rounds per scenario, uninstrumented (the first answers of a cold server may be 503s)' },
  rounds: { kind: 'int', median: true, quick: 3, full: 5, help: 'measured rounds per scenario, an odd number ≥ 3 (their median is the figure)' },
  connections: { kind: 'int', quick: 8, help: 'connections, one request in flight on each' },
  scenarios: {
    kind: 'list',
    choices: MAIN.map((s) => s.name),
    quick: ['valid submission'],
    full: MAIN.filter((s) => !LANE_SCENARIOS.has(s.name)).map((s) => s.name),
    help: 'the main scenarios measured (the echo answers eth_chainId alone, the floor four of them)',
  },
  'no-stages': { kind: 'flag', help: "skip txgate's per-stage table" },
  'express-lane': {
    kind: 'flag',
    help: "chain 4663 enables the express lane (the stub serves its auction, a round nobody holds, and its endpoint) and the load account's grant has it: a plain submission's cost with the lane configured but not in control",
  },
  'express-lane-held': {
    kind: 'flag',
    help: "as --express-lane, but the stub's auction names txgate's controller for the round: every valid submission is wrapped (the endpoint answers null, the lookup finds the hash)",
  },
  'max-spread': {
    kind: 'number',
    min: 0.1,
    quick: 10,
    full: 5,
    help: "bound on a scenario's rounds' spread, % of their median: rounds beyond it are measured again",
  },
  retries: { kind: 'int', min: 0, quick: 1, full: 2, help: "times a scenario's noisy rounds are measured again" },
  keep: { kind: 'text', arg: 'DIR', help: 'keep every callgrind dump in DIR (for callgrind_annotate)' },
  top: {
    kind: 'int',
    min: 0,
    quick: 0,
    help: 'functions listed per scenario of the floor and txgate (self instructions per request in the median round); node then runs with --perf-basic-prof to name JIT code, whose map logging adds work to every GC: a run with --top profiles, its totals are not the figures',
  },
  idle: {
    kind: 'number',
    min: 0,
    quick: 10,
    help: "seconds each server is measured idle after its measured rounds: its timers' and background work's instructions per second, which every round also counts by its wall time (0: not measured)",
  },
  workers: { kind: 'int', min: 1, quick: 1, help: "txgate's worker threads (callgrind counts every thread of the process; HTTP scenarios only above 1)" },
  worker: {
    kind: 'int',
    min: 0,
    quick: 1,
    help: "with --workers above 1: the worker every HTTP connection to txgate is held on (worker 0 owns each tracked chain's tracker; another hands acceptances over to it)",
  },
  steady: {
    kind: 'flag',
    help: "as bench:limit and the CI guard measure: every server runs with their node flags (V8's seeds fixed, a fixed 16-MB young generation, no memory reducer: bench/limit/flags.ts), the warm-up rounds interleave the scenarios as the measured ones do, the measured rounds' order is turned round every other round (a collection that comes once per pass falls in each scenario's rounds alike), and a round in which TurboFan compiled more than 5% of its count is measured again: two runs of one tree do the same work, the collector's included",
  },
  'port-base': {
    kind: 'int',
    min: 1024,
    quick: 18150,
    help: 'first of the loopback ports used (the servers PORT..PORT+3, the stubs PORT+100..PORT+109): two runs at once need bases 200 apart',
  },
});
const opt = run.opt;
const want = (name: string) => opt.scenarios === undefined || opt.scenarios.includes(name);
needCallgrind('bench:instr');
const pinned = opt.workers > 1;
if (pinned && (opt.worker >= opt.workers || MAIN.some((s) => s.ws === true && want(s.name)))) {
  process.stderr.write(`bench:instr: --worker must be below --workers (${opt.workers}), and WebSocket scenarios need --workers 1\n`);
  process.exit(2);
}
const settings: ReportSettings = {
  requests: opt.requests,
  warmup: opt.warmup,
  rounds: opt.rounds,
  connections: opt.connections,
  maxSpread: opt['max-spread'] / 100,
  retries: opt.retries,
  idleS: opt.idle,
  top: opt.top,
  ...(opt.steady === true ? { maxJit: 0.05, interleaveWarmup: true, alternate: true } : {}),
};
const say = (section: string[], lines: readonly string[]) => {
  section.push(...lines);
  for (const l of lines) process.stdout.write(l + '\n');
};
const leftOut: string[] = [];
const nodeFlags = opt.steady === true ? NODE_FLAGS : [];
const cg = new Callgrind(run.tmp, run.children, opt.keep === undefined ? undefined : run.userPath(opt.keep), opt.top, nodeFlags);
const driver = new Driver(opt.connections, pinned ? { port: opt['port-base'] + 2, worker: opt.worker } : undefined);
const measure = new Measure(settings, cg, driver, {
  idle: (name, perSecond, seconds) => process.stdout.write(idleLine(name, perSecond, seconds) + '\n'),
  measured: (m) => process.stdout.write(measuredLine(m, settings.maxSpread) + '\n'),
  note: (line) => process.stderr.write(line + '\n'),
  leftOut: (what, line) => {
    process.stdout.write(line + '\n');
    leftOut.push(what);
  },
});

// --- the servers --------------------------------------------------------------------------------
const BASE = opt['port-base'];
const STUB = BASE + 100;
const lane4663 = opt['express-lane'] || opt['express-lane-held'];
/** The chains beside 4663: the receipt, ws and tracked ones always (as they have always been measured), a lane chain with its scenario. */
const chains = new Set<keyof typeof CHAINS>(['receipt', 'tracked', 'ws']);
for (const [scenario, chain] of Object.entries(CHAIN_OF)) if (LANE_SCENARIOS.has(scenario) && want(scenario)) chains.add(chain);
/** Each chain's stub sequencer (chain 4663's at STUB); its auction names txgate's controller only where the lane is ours. */
const stubHolder = (c: keyof typeof CHAINS | '4663') => (c === 'laneOurs' || (c !== 'laneNotOurs' && opt['express-lane-held']) ? LANE_CONTROLLER : null);
await startStub({ port: STUB, chainId: 4663, holder: stubHolder('4663'), children: run.children });
for (const c of chains) await startStub({ port: STUB + CHAINS[c].stub, chainId: CHAINS[c].chainId, holder: stubHolder(c), children: run.children });

const started = Date.now();
process.stderr.write(
  `valgrind ${spawnSync('valgrind', ['--version'], { encoding: 'utf8' }).stdout.trim()}, node ${process.version}; ${opt.requests} requests a round, ${opt.warmup} warm-up + ${opt.rounds} measured rounds, ${opt.connections} connections\n`,
);
const SERVERS: Record<'echo' | 'floor' | 'txgate', ServerDef & { scenarios: readonly Scenario[] }> = {
  echo: { port: BASE, args: [server('echo-server'), String(BASE)], scenarios: [MAIN[0]!] },
  floor: {
    port: BASE + 1,
    args: [
      server('floor-server'),
      String(BASE + 1),
      join(run.tmp, 'floor.log'),
      keySha256(keys.load),
      `http://127.0.0.1:${STUB}`,
      ANVIL_TIP_ADDRESS,
      MIN_TIP.toString(),
    ],
    scenarios: MAIN.filter((s) => FLOOR.has(s.name) && want(s.name)),
  },
  txgate: {
    port: BASE + 2,
    txgate: {
      config: (dir) => txgateConfig({ stub: STUB, port: BASE + 2, lane4663, chains, workers: opt.workers }, dir),
      accounts: accounts(
        lane4663,
        chains.has('laneNotOurs') || chains.has('laneOurs') || chains.has('laneOff'),
        chains.has('conditionsOn') || chains.has('conditionsOff'),
        chains.has('untracked'),
      ),
      files: { [LANE_KEY_FILE]: LANE_KEY },
      parent: run.tmp,
    },
    scenarios: MAIN.filter((s) => want(s.name)),
  },
};

// --- measuring -----------------------------------------------------------------------------------
// All three start under callgrind at once (node takes tens of seconds to start there; on two
// cores the starts overlap), then each is measured in turn and stopped.
const starting = Object.entries(SERVERS).map(([name, def]) => ({ name, def, server: cg.start(name, def) }));
for (const s of starting) s.server.catch(() => undefined); // awaited below, in turn
const results: Measured[] = [];
const stageNames = new Map(STAGES.map((s) => [s.stage, s.same ?? s.name]));
let costs: StageCost[] = [];
let sender: { exit: number; paired: Paired } | undefined;
/** The forward to a ws:// sequencer: that submission less the exit at rate_limit (the stage before the forward), when both were measured. */
let wsForward: { exit: number; cost: number; paired: Paired } | undefined;
const sections: string[][] = [];
const pairedOf = (a: Measured, b: Measured): Paired => {
  const d = a.rounds.map((r, i) => r.perReq - (b.rounds[i]?.perReq ?? r.perReq));
  return { median: median(d), lo: Math.min(...d), hi: Math.max(...d) };
};
for (const { name, def, server: pending } of starting) {
  const srv = await pending;
  const set: Scenario[] = [...def.scenarios];
  const withStages = name === 'txgate' && !opt['no-stages'];
  // A stage exit that is a main scenario is measured once, under the main one's name.
  if (withStages)
    for (const s of [...STAGES, SENDER]) {
      const same = (s as { same?: string }).same;
      const named: Scenario = same !== undefined ? { ...s, name: same } : s;
      if (!set.some((x) => x.name === named.name)) set.push(named);
    }
  const measured = await measure.set(srv, set);
  driver.closeLanes();
  await srv.stop();
  results.push(...measured.filter((m) => def.scenarios.some((s) => s.name === m.scenario)));
  if (name === 'echo' && !results.some((r) => r.server === 'echo')) {
    // Every ratio is to the echo: without it there is nothing to report.
    process.stderr.write(
      `bench:instr: the bare uWS echo on port ${BASE} misanswered in every round (another process on the port?): no reference; try another --port-base\n`,
    );
    process.exit(1);
  }
  if (!withStages) continue;
  const exit = (scenario: string) => measured.find((m) => m.scenario === scenario)!;
  const echo = results.find((r) => r.server === 'echo')!;
  const perRound = (m: Measured) => m.rounds.map((r) => r.perReq);
  costs = stageCosts(
    { stage: 'front end', rounds: perRound(echo) },
    STAGES.map((s) => ({ stage: s.stage, rounds: perRound(exit(stageNames.get(s.stage)!)) })),
  );
  const fee = exit(stageNames.get('fee')!);
  const senderM = exit(SENDER.name);
  sender = { exit: senderM.median, paired: pairedOf(senderM, fee) };
  const wsM = measured.find((m) => m.scenario === WS_SEQUENCER);
  const limited = exit(stageNames.get('rate_limit')!);
  if (wsM !== undefined) wsForward = { exit: wsM.median, cost: Math.max(0, wsM.median - limited.median), paired: pairedOf(wsM, limited) };
  // The per-stage table as soon as it is known.
  const t: string[] = [];
  sections.push(t);
  say(
    t,
    stageTable(
      {
        echo,
        costs,
        exitOf: (stage) => ({ m: exit(stageNames.get(stage)!), request: STAGES.find((x) => x.stage === stage)!.name }),
        sender: { scenario: SENDER.name, m: senderM, overFee: Math.max(0, senderM.median - fee.median), paired: sender.paired },
        ...(wsM !== undefined && wsForward !== undefined
          ? { wsForward: { scenario: WS_SEQUENCER, m: wsM, cost: wsForward.cost, paired: wsForward.paired } }
          : {}),
      },
      settings,
    ),
  );
}

// Bytes allocated per request: each server again, plain (no valgrind), a 1-MB young generation.
const allocated = new Map<string, number>();
for (const [name, def] of Object.entries(SERVERS)) {
  const srv = await cg.start(name, def, true);
  for (const s of def.scenarios) {
    // A connection the server resets (a reference misanswering on a busy host) leaves this
    // figure out, said in one line, instead of ending the run with a stack trace.
    const bytes = await measure.allocation(srv, s).catch((e: unknown) => {
      process.stderr.write(`${name} / ${s.name}: bytes allocated per request not measured (${(e as Error).message})\n`);
      return Number.NaN;
    });
    allocated.set(`${name}/${s.name}`, bytes);
  }
  driver.closeLanes();
  await srv.stop();
}

// Collections attributed by the bytes each scenario allocates, on every server whose scenarios all
// have that figure (measure.ts's gcByAllocation), not by the rounds they happened to fall in.
for (const name of Object.keys(SERVERS)) {
  const mine = results.filter((m) => m.server === name);
  const shared = gcByAllocation(mine, (m) => allocated.get(`${m.server}/${m.scenario}`) ?? Number.NaN);
  if (shared === null) continue;
  for (const [i, m] of mine.entries()) results[results.indexOf(m)] = shared[i]!;
}

// --- the report ----------------------------------------------------------------------------------
const report: MainReport = { results, main: MAIN, leftOut, allocated, idle: measure.idle };
const main: string[] = [];
if (pinned) main.push(`txgate with ${opt.workers} worker threads, every HTTP connection held on worker ${opt.worker}; callgrind counts every thread.\n`);
if (nodeFlags.length > 0)
  main.push(
    `--steady: every server under callgrind ran with node ${nodeFlags.join(' ')}; the warm-up rounds interleaved the scenarios, the measured rounds' order was turned round every other round, and a round in which TurboFan compiled more than 5% of its count was measured again.\n`,
  );
say(main, mainTables(report, settings));
const svgPath = run.write('instr.svg', instrSvg(report, costs, settings));
main.push(`\n![instructions per request](${svgPath.split('/').at(-1)})`);
const minutes = round((Date.now() - started) / 60_000, 1);
// A quick run says how it differs from the committed one (its settings, by the JSON's names).
const differs =
  run.outDir === RESULTS_DIR
    ? ''
    : differsFrom(RESULTS_DIR, 'instr.json', { requests: opt.requests, warmup: opt.warmup, rounds: opt.rounds, maxSpread: settings.maxSpread });
if (differs !== '') process.stdout.write(`\n${differs}\n`);
const mdPath = run.write('instr.md', [...main, ...sections.flat(), ...(differs !== '' ? ['', differs] : []), `\n(${minutes} min)`].join('\n') + '\n');
run.write(
  'instr.json',
  resultsJson('instr', {
    node: process.version,
    date: new Date().toISOString(),
    requests: opt.requests,
    warmup: opt.warmup,
    rounds: opt.rounds,
    maxSpread: settings.maxSpread,
    ...(pinned ? { workers: opt.workers, worker: opt.worker } : {}),
    ...(nodeFlags.length > 0 ? { nodeFlags: [...nodeFlags] } : {}),
    results,
    stageCosts: costs,
    ...(sender !== undefined ? { sender } : {}),
    ...(wsForward !== undefined ? { wsForward } : {}),
    allocated: Object.fromEntries(allocated),
    idle: Object.fromEntries(measure.idle),
  }),
);
process.stdout.write(`\n(${minutes} min) written to ${mdPath}, instr.json and instr.svg\n`);
process.exit(0);
