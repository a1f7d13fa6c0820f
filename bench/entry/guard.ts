/**
 * `npm run bench:guard`: the CI guard on the hot path's instruction counts (docs/performance.md,
 * "The guard"). Two txgates under callgrind in one run on one machine, the base build
 * (`--base-cli`: the tree bench/results/guard.json names, built apart by scripts/instr-guard.sh)
 * and this one, each scenario counted on both as bench:instr counts it (bench/instr/), with
 * bench:limit's fixed node flags, round by round side by side; a scenario whose candidate / base
 * (the median of the rounds' paired ratios) is above 1 + its tolerance fails the run (exit 1). The tolerances are derived from runs of one tree against itself
 * (`--noise-from DIR`: the guard-run JSON of such runs, in one directory) and committed with the
 * base's commit in bench/results/guard.json.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { median } from '../common/figures.js';
import { startBench } from '../common/bench-run.js';
import { readRun, resultsJson } from '../common/results-schema.js';
import { REPO, RESULTS_DIR } from '../common/paths.js';
import { portsTaken } from '../common/ports.js';
import { startStub } from '../servers/stub-sequencer.js';
import { Callgrind, type Server } from '../instr/callgrind.js';
import { Driver } from '../instr/drive.js';
import { Measure, type Round } from '../instr/measure.js';
import { accounts, CHAINS, MAIN, type Scenario, txgateConfig, WS_SEQUENCER } from '../instr/scenarios.js';
import { NODE_FLAGS } from '../limit/flags.js';
import { allocatedName, type GuardFile, toleranceOf, verdictLine, verdicts } from '../guard/verdict.js';

const GUARDED = ['eth_chainId', '401 unauthorized', 'valid submission', WS_SEQUENCER];
/**
 * The scenarios whose bytes allocated are guarded: 20,000 requests of a valid submission fill
 * 300-400 young generations of 1 MB, counted whole, so the figure holds within 0.4-0.7% from
 * process to process; eth_chainId's and the 401's fill 35-70, and a generation more or less
 * moved them by up to 4.8%: said on stderr, not guarded.
 */
const BYTES_GUARDED = ['valid submission', WS_SEQUENCER];
const run = startBench(
  'bench:guard',
  "CI's guard: this build's instructions per request against the base build's, counted in the same run, each within its tolerance.",
  {
    'base-cli': {
      kind: 'text',
      arg: 'PATH',
      help: "the base build's dist/src/cli.js (scripts/instr-guard.sh builds the commit bench/results/guard.json names)",
    },
    'base-commit': { kind: 'text', arg: 'SHA', help: "the commit the base build is of (said in the report; default guard.json's)" },
    requests: { kind: 'int', quick: 400, full: 1000, help: 'requests per round' },
    warmup: {
      kind: 'int',
      quick: 12,
      full: 12,
      help: 'unmeasured rounds per scenario, uninstrumented, interleaved over the scenarios (V8 compiles for about 18 of 4 x 300 requests)',
    },
    rounds: {
      kind: 'int',
      median: true,
      quick: 5,
      full: 7,
      help: 'measured rounds per scenario, an odd number ≥ 3 (the median of their paired ratios is the figure)',
    },
    'noise-from': {
      kind: 'text',
      arg: 'DIR',
      help: 'measure nothing: derive each tolerance from the guard runs in DIR (runs of one tree against itself) and write guard.json naming --commit',
    },
    commit: { kind: 'text', arg: 'SHA', help: 'with --noise-from: the base commit guard.json names (default: HEAD)' },
    'fresh-noise': {
      kind: 'flag',
      help: "with --noise-from: the tolerances from DIR's runs alone (by default the committed guard.json's ratios, earlier studies, count too)",
    },
    keep: { kind: 'text', arg: 'DIR', help: 'keep every callgrind dump in DIR (for callgrind_annotate)' },
    top: {
      kind: 'int',
      quick: 0,
      help: "functions listed per scenario and build in guard-run.json (self instructions per request in the median round; node then runs with --perf-basic-prof, which adds work: a run with --top diagnoses, its verdict is not the guard's)",
    },
    'port-base': { kind: 'int', min: 1024, quick: 18550, help: 'first of the loopback ports (txgates PORT..PORT+3, stubs PORT+100..PORT+102)' },
  },
);
const opt = run.opt;

if (opt['noise-from'] !== undefined) {
  // The tolerances from runs of one tree against itself.
  const dir = run.userPath(opt['noise-from']);
  // DIR's guard runs: DIR/*/guard-run.json (each run's --out) or DIR/*.json.
  const runs = readdirSync(dir, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? join(dir, e.name, 'guard-run.json') : e.name.endsWith('.json') ? join(dir, e.name) : ''))
    .filter((f) => f !== '' && existsSync(f))
    .map((f) => JSON.parse(readFileSync(f, 'utf8')) as { ratios: Record<string, number> });
  if (runs.length < 3) {
    process.stderr.write(`bench:guard: --noise-from ${opt['noise-from']}: ${runs.length} guard runs, at least 3 are needed\n`);
    process.exit(2);
  }
  const commit = opt.commit ?? execFileSync('git', ['-C', REPO, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  // Earlier studies count too: a few runs of one tree do not show all it does from run to run.
  const earlier = opt['fresh-noise'] === true || !existsSync(join(RESULTS_DIR, 'guard.json')) ? null : readRun('guard', 'guard');
  const file: GuardFile = {
    commit,
    date: new Date().toISOString(),
    scenarios: Object.fromEntries(
      [...GUARDED, ...BYTES_GUARDED.map(allocatedName)].map((s) => [
        s,
        toleranceOf([...(earlier?.scenarios[s]?.noise.ratios ?? []), ...runs.map((r) => r.ratios[s]!).filter((x) => x !== undefined)]),
      ]),
    ),
  };
  for (const [s, t] of Object.entries(file.scenarios))
    process.stdout.write(`${s}: tolerance +${(t.tolerance * 100).toFixed(1)}% (${t.noise.runs} runs, worst ${(t.noise.worst * 100).toFixed(2)}%)\n`);
  const path = run.write('guard.json', resultsJson('guard', file));
  process.stdout.write(`written to ${path}\n`);
  process.exit(0);
}

if (opt['base-cli'] === undefined) {
  process.stderr.write('bench:guard: --base-cli PATH is needed (scripts/instr-guard.sh builds the base and gives it)\n');
  process.exit(2);
}
if (spawnSync('which', ['callgrind_control']).status !== 0) {
  process.stderr.write('bench:guard: valgrind is not installed: the guard counts instructions with callgrind (Debian: apt-get install -y valgrind)\n');
  process.exit(1);
}
const guard: GuardFile = readRun('guard', 'guard');
const baseCommit = opt['base-commit'] ?? guard.commit;

const BASE = opt['port-base'];
const STUB = BASE + 100;
const taken = await portsTaken([BASE, BASE + 1, BASE + 2, BASE + 3, STUB, STUB + CHAINS.ws.stub]);
if (taken.length > 0) {
  process.stderr.write(`bench:guard: 127.0.0.1:${taken.join(', ')} already taken (another run?): choose another --port-base\n`);
  process.exit(2);
}
const chains = new Set<keyof typeof CHAINS>(['ws']);
await startStub({ port: STUB, chainId: 4663, holder: null, children: run.children });
await startStub({ port: STUB + CHAINS.ws.stub, chainId: CHAINS.ws.chainId, holder: null, children: run.children });
const cg = new Callgrind(run.tmp, run.children, opt.keep === undefined ? undefined : run.userPath(opt.keep), opt.top, NODE_FLAGS);
const driver = new Driver(8);
const measure = new Measure({ requests: opt.requests, warmup: opt.warmup, rounds: opt.rounds, maxSpread: 1, retries: 0, idleS: 0 }, cg, driver, {
  idle: () => undefined,
  measured: () => undefined,
  note: () => undefined,
  leftOut: () => undefined,
});
const scenarios = MAIN.filter((s) => GUARDED.includes(s.name));
const txgate = (name: string, port: number, cli: string) =>
  cg.start(name, {
    port,
    txgate: { config: (dir) => txgateConfig({ stub: STUB, port, lane4663: false, chains }, dir), accounts: accounts(false, false), cli, parent: run.tmp },
  });
const started = Date.now();
const servers = await Promise.all([txgate('base', BASE, run.userPath(opt['base-cli'])), txgate('candidate', BASE + 2, join(REPO, 'dist/src/cli.js'))]);
// Like with like: both builds warmed and counted round by round side by side (round r of a
// scenario on the base, then on the candidate), so a round's wall-time-bound work (timers, the
// log's batches) is alike on both; warm-up rounds interleaved over the scenarios as the counted ones.
process.stderr.write(`bench:guard: both builds started (${((Date.now() - started) / 1000).toFixed(0)} s); warming up\n`);
for (let i = 0; i < opt.warmup; i++) for (const s of scenarios) for (const srv of servers) await driver.drive(srv.port, s, opt.requests);
process.stderr.write(`bench:guard: warmed (${((Date.now() - started) / 1000).toFixed(0)} s); counting\n`);
for (const srv of servers) cg.control('--instr=on', srv.child.pid!);
/** A round in which TurboFan compiled more than 5% of its count ran partly in a lower tier: counted again, up to 3 times. */
const steady = async (srv: Server, s: Scenario): Promise<Round> => {
  let r = await measure.oneRound(srv, s);
  for (let k = 0; k < 3 && (r.jitPerReq > 0.05 * r.perReq || r.unexpected !== undefined); k++) r = await measure.oneRound(srv, s);
  if (r.unexpected !== undefined) throw new Error(`${srv.name} / ${s.name}: expected every answer ${s.status}, got ${r.unexpected}`);
  return r;
};
const rounds = new Map(scenarios.map((s) => [s.name, [[], []] as [Round[], Round[]]]));
for (let r = 0; r < opt.rounds; r++) {
  for (const s of scenarios) for (const [i, srv] of servers.entries()) rounds.get(s.name)![i]!.push(await steady(srv, s));
  process.stderr.write(`bench:guard: round ${r + 1}/${opt.rounds} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
}
for (const srv of servers) {
  driver.closeLanes();
  await srv.stop();
}
// Bytes allocated per request: each build started plain (node alone, a 1-MB young generation),
// each scenario loaded until whole young generations are counted (bench:instr's allocation).
process.stderr.write(`bench:guard: counting bytes allocated per request (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
const allocated = new Map(scenarios.map((s) => [s.name, [0, 0] as [number, number]]));
for (const [i, [name, cli]] of (
  [
    ['base', run.userPath(opt['base-cli']!)],
    ['candidate', join(REPO, 'dist/src/cli.js')],
  ] as const
).entries()) {
  const port = BASE + 2 * i;
  const srv = await cg.start(
    `${name}-plain`,
    {
      port,
      txgate: { config: (dir) => txgateConfig({ stub: STUB, port, lane4663: false, chains }, dir), accounts: accounts(false, false), cli, parent: run.tmp },
    },
    true,
  );
  for (const s of scenarios) allocated.get(s.name)![i] = await measure.allocation(srv, s);
  driver.closeLanes();
  await srv.stop();
}
/**
 * Each round's count without the collector's instructions (Heap::CollectGarbage, inclusive): a
 * scavenge costs a round 30-36k per request of 200 and lands in whichever round fills the young
 * generation, so over 3-5 rounds a scenario holds none or one, and a build's figure moved by a
 * tenth with it (docs/performance.md, "The guard"). What a change costs the collector shows in
 * what it allocates, counted apart (`allocated`).
 */
const perReq = (rs: readonly Round[]) => rs.map((r) => r.perReq - r.gcIr / r.n);
const counts = GUARDED.map((scenario) => {
  const [b, c] = rounds.get(scenario)!.map(perReq) as [number[], number[]];
  for (const [name, xs] of [
    ['base', b],
    ['candidate', c],
  ] as const)
    process.stderr.write(`${name.padEnd(9)} ${scenario.padEnd(44)} ${xs.map((x) => `${(x / 1000).toFixed(1)}k`).join(' ')}\n`);
  const tops = rounds.get(scenario)!.map((rs) => [...rs].sort((x, y) => x.perReq - y.perReq)[rs.length >> 1]!.top);
  return {
    scenario,
    base: median(b),
    candidate: median(c),
    ratio: median(c.map((x, i) => x / b[i]!)),
    ...(opt.top > 0 ? { top: { base: tops[0], candidate: tops[1] } } : {}),
  };
});
// The bytes are guarded as the instructions are, each scenario's under its own name.
const bytes = GUARDED.flatMap((scenario) => {
  const [base, candidate] = allocated.get(scenario)!;
  process.stderr.write(`allocated ${scenario.padEnd(44)} base ${base.toFixed(0)} B, candidate ${candidate.toFixed(0)} B\n`);
  return BYTES_GUARDED.includes(scenario) ? [{ scenario: allocatedName(scenario), base, candidate }] : [];
});
const vs = verdicts([...counts, ...bytes], guard.scenarios);
process.stdout.write(
  `bench:guard: this build against ${baseCommit.slice(0, 12)}${baseCommit === guard.commit ? ' (bench/results/guard.json)' : ''}, ${opt.requests} requests x ${opt.rounds} rounds\n`,
);
for (const v of vs) process.stdout.write(verdictLine(v) + '\n');
const failed = vs.filter((v) => !v.pass);
run.write(
  'guard-run.json',
  JSON.stringify({ base: baseCommit, date: new Date().toISOString(), counts, ratios: Object.fromEntries(vs.map((v) => [v.scenario, v.ratio])) }, null, 2) +
    '\n',
);
process.stdout.write(
  `(${((Date.now() - started) / 60_000).toFixed(1)} min) ${failed.length === 0 ? 'pass' : `FAIL: ${failed.map((v) => v.scenario).join(', ')} dearer than the base beyond the tolerance (docs/performance.md, "The guard")`}\n`,
);
process.exit(failed.length === 0 ? 0 : 1);
