/**
 * `npm run bench:profile`: the profiler (docs/performance.md, "The profiler"). Which stage of a
 * request costs what, on the request's own path, in this tree and in a base build (main by
 * default, `--base REF`), counted in one run: both builds under valgrind's callgrind with their
 * stage probes (src/pipeline/probes.ts), warmed with the scenarios interleaved, then counted
 * round by round side by side (bench/profile/rounds.ts), each round attributed to the stages,
 * the answer and what lies outside them (bench/profile/attribute.ts), and every part compared
 * (bench/profile/verdict.ts). With `--guard` it is CI's guard: the base is the commit
 * bench/results/guard.json names, and a total or stage dearer beyond its bound fails the run.
 *
 * Needs valgrind (Debian: apt-get install -y valgrind) and a C compiler for the probes; loopback only.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { baseBuildOrExit, resolveRef } from '../common/base-build.js';
import { startBench } from '../common/bench-run.js';
import { REPO, RESULTS_DIR, server } from '../common/paths.js';
import { portsTaken } from '../common/ports.js';
import { readRun, resultsJson, type Compared, type ProfileRun } from '../common/results-schema.js';
import { startStub } from '../servers/stub-sequencer.js';
import { Callgrind, needCallgrind } from '../instr/callgrind.js';
import { Driver } from '../instr/drive.js';
import { allocation } from '../instr/allocation.js';
import { accounts, CHAIN_OF, CHAINS, LANE_CONTROLLER, LANE_KEY, LANE_KEY_FILE, MAIN, txgateConfig, type Scenario } from '../instr/scenarios.js';
import { median } from '../common/figures.js';
import { allocatedName, partFloorOf, toleranceOf, type GuardFile } from '../guard/verdict.js';
import { buildProbes, PROFILE_FLAGS, SLOTS } from '../profile/probes.js';
import { Rounds, type Counted, type Round } from '../profile/rounds.js';
import { compare } from '../profile/verdict.js';
import { consoleTable, profileHtml, profileMarkdown, profileSvg } from '../profile/report.js';

/** The guard's scenarios: what CI counts on every change (docs/performance.md, "The guard"). */
const GUARDED = ['eth_chainId', '401 unauthorized', 'valid submission', 'valid submission to a WebSocket sequencer'];
/** The scenarios whose bytes allocated are guarded (eth_chainId's and the 401's fill too few young generations to hold within a percent). */
const BYTES_GUARDED = ['valid submission', 'valid submission to a WebSocket sequencer'];
/**
 * Scenarios of a feature's own chain (the express lane's, conditional sends', the tracked chain's
 * twin with tracking off): counted when asked for (--scenarios, --full).
 */
const OWN_CHAIN = new Set([
  'valid submission, express lane ours',
  'valid submission, express lane not ours',
  'valid submission, express lane off',
  'valid submission, untracked chain',
  'valid submission, conditions off',
  'valid submission, conditions on',
  'conditional submission, empty options',
]);
/** The scenarios the profiler counts by default: every request a desk sends on a chain of the default kinds. */
const DEFAULT = MAIN.map((s) => s.name).filter((s) => !OWN_CHAIN.has(s));

const run = startBench('bench:profile', 'Which stage of a request costs what, this tree against a base build, counted in one run (callgrind).', {
  base: {
    kind: 'text',
    arg: 'REF',
    quick: 'main',
    help: "the base build: a commit, branch or tag, built apart (kept under node_modules/.cache); '.' is this tree's own build",
  },
  scenarios: {
    kind: 'list',
    choices: MAIN.map((s) => s.name),
    quick: DEFAULT,
    full: MAIN.map((s) => s.name),
    help: 'the requests profiled',
  },
  requests: { kind: 'int', quick: 200, full: 1000, help: 'requests per round' },
  warmup: { kind: 'int', quick: 12, full: 24, help: 'unmeasured rounds of every scenario on both builds, interleaved, before the count' },
  rounds: { kind: 'int', median: true, quick: 5, full: 7, help: 'counted rounds per scenario and build, an odd number ≥ 3 (medians of them)' },
  retries: { kind: 'int', min: 0, quick: 3, help: 'times a round with a collection or compiling in it is counted again' },
  echo: { kind: 'flag', help: "count the bare uWS echo's eth_chainId beside, the reference of the README's ratios (x the echo)" },
  workers: { kind: 'int', min: 1, quick: 1, help: "txgate's worker threads (HTTP scenarios only above 1)" },
  worker: {
    kind: 'int',
    min: 0,
    quick: 1,
    help: "with --workers above 1: the worker every HTTP connection is held on (worker 0 owns each tracked chain's tracker; another hands acceptances over to it)",
  },
  bytes: { kind: 'flag', help: 'also count bytes allocated per request (each build started plain; the guard does)' },
  guard: {
    kind: 'flag',
    help: "CI's guard: the base is bench/results/guard.json's commit (unless --base), bytes counted, the guarded scenarios; exit 1 when a total or stage is dearer beyond its bound",
  },
  'fresh-noise': {
    kind: 'flag',
    help: "with --noise-from: the tolerances from DIR's runs alone (by default the committed guard.json's ratios, earlier studies, count too)",
  },
  'noise-from': {
    kind: 'text',
    arg: 'DIR',
    help: "measure nothing: derive the guard's tolerances from the profile.json of runs of one tree against itself in DIR and write guard.json naming --base",
  },
  label: { kind: 'text', arg: 'NAME', quick: 'profile', help: "the results files' name: NAME.json, .md, .svg and .html" },
  keep: { kind: 'text', arg: 'DIR', help: 'keep every callgrind dump in DIR (for callgrind_annotate)' },
  'port-base': { kind: 'int', min: 1024, quick: 18350, help: 'first of the loopback ports (servers PORT..PORT+3, stubs PORT+100..PORT+110)' },
});
const opt = run.opt;
const say = (line: string) => process.stderr.write(`bench:profile: ${line}\n`);

const guardFile: GuardFile | null = existsSync(join(RESULTS_DIR, 'guard.json')) ? readRun('guard', 'guard') : null;
if (opt['noise-from'] !== undefined) {
  const dir = run.userPath(opt['noise-from']);
  const runs = readdirSync(dir, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? join(dir, e.name, 'profile.json') : e.name.endsWith('.json') ? join(dir, e.name) : ''))
    .filter((f) => f !== '' && existsSync(f))
    .map((f) => JSON.parse(readFileSync(f, 'utf8')) as ProfileRun);
  if (runs.length < 3) {
    process.stderr.write(`bench:profile: --noise-from ${opt['noise-from']}: ${runs.length} runs, at least 3 are needed\n`);
    process.exit(2);
  }
  const ratios = new Map<string, number[]>();
  const deltas = new Map<string, number[]>();
  for (const r of runs)
    for (const c of r.compared) {
      for (const p of c.parts) deltas.set(p.part, [...(deltas.get(p.part) ?? []), p.candidate - p.base]);
      const name = c.scenario;
      ratios.set(name, [...(ratios.get(name) ?? []), c.total.candidate / c.total.base]);
      // Bytes are guarded where they hold within a percent from process to process (BYTES_GUARDED).
      if (c.bytes !== undefined && BYTES_GUARDED.includes(name))
        ratios.set(allocatedName(name), [...(ratios.get(allocatedName(name)) ?? []), c.bytes.candidate / c.bytes.base]);
    }
  let commit: string;
  try {
    commit = resolveRef(opt.base === 'main' ? 'HEAD' : opt.base!);
  } catch (e) {
    process.stderr.write(`bench:profile: ${(e as Error).message}\n`);
    process.exit(2);
  }
  const file: GuardFile = {
    commit,
    date: new Date().toISOString(),
    // Every scenario the runs counted: the guard's fail the run, the others bound the profiler's
    // verdicts. Earlier studies count too: a few runs of one tree do not show all it does from one
    // run to the next.
    scenarios: Object.fromEntries(
      [...ratios].map(([s, rs]) => [s, toleranceOf([...(opt['fresh-noise'] ? [] : (guardFile?.scenarios[s]?.noise.ratios ?? [])), ...rs])]),
    ),
    parts: Object.fromEntries([...deltas].map(([p, ds]) => [p, partFloorOf(ds)])),
  };
  for (const [s, t] of Object.entries(file.scenarios))
    process.stdout.write(`${s}: tolerance +${(t.tolerance * 100).toFixed(1)}% (${t.noise.runs} runs, worst ${(t.noise.worst * 100).toFixed(2)}%)\n`);
  process.stdout.write(`written to ${run.write('guard.json', resultsJson('guard', file))}\n`);
  process.exit(0);
}

needCallgrind('bench:profile');
const baseRef = opt.guard && opt.base === 'main' ? (guardFile?.commit ?? 'main') : opt.base!;
const scenarios: Scenario[] = MAIN.filter((s) => (opt.guard ? GUARDED : (opt.scenarios ?? DEFAULT)).includes(s.name));
const countBytes = opt.bytes || opt.guard;

const PORT = opt['port-base'];
const STUB = PORT + 100;
const chains = new Set<keyof typeof CHAINS>(scenarios.flatMap((s) => (CHAIN_OF[s.name] !== undefined ? [CHAIN_OF[s.name]!] : [])));
const pinned = opt.workers > 1;
if (pinned && (opt.worker >= opt.workers || scenarios.some((s) => s.ws === true))) {
  process.stderr.write(`bench:profile: --worker must be below --workers (${opt.workers}), and WebSocket scenarios need --workers 1\n`);
  process.exit(2);
}
const taken = await portsTaken([PORT, PORT + 1, PORT + 2, PORT + 3, STUB, ...[...chains].map((c) => STUB + CHAINS[c].stub)]);
if (taken.length > 0) {
  process.stderr.write(`bench:profile: 127.0.0.1:${taken.join(', ')} already taken (another run?): choose another --port-base\n`);
  process.exit(2);
}

const started = Date.now();
const secs = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
const base = baseBuildOrExit('bench:profile', baseRef);
if (!existsSync(join(base.root, 'src/pipeline/probes.ts'))) {
  process.stderr.write(
    `bench:profile: the base ${baseRef} (${base.commit.slice(0, 12)}) predates the stage probes (src/pipeline/probes.ts): choose a later base\n`,
  );
  process.exit(2);
}
const addon = buildProbes(run.tmp);
const candidateCommit = execFileSync('git', ['-C', REPO, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
const dirty = execFileSync('git', ['-C', REPO, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';

await startStub({ port: STUB, chainId: 4663, holder: null, children: run.children });
// The express lane's chain whose round txgate's controller holds: its stub's auction names it.
for (const c of chains)
  await startStub({ port: STUB + CHAINS[c].stub, chainId: CHAINS[c].chainId, holder: c === 'laneOurs' ? LANE_CONTROLLER : null, children: run.children });
const cg = new Callgrind(run.tmp, run.children, PROFILE_FLAGS);
const builds = [
  { build: 'base', cli: base.cli, port: PORT },
  { build: 'candidate', cli: join(REPO, 'dist/src/cli.js'), port: PORT + 2 },
] as const;
const driverOf = (port: number) => new Driver(8, pinned ? { port, worker: opt.worker } : undefined);
const spec = (b: (typeof builds)[number], env: NodeJS.ProcessEnv) => ({
  port: b.port,
  txgate: {
    config: (dir: string) => txgateConfig({ stub: STUB, port: b.port, lane4663: false, chains, workers: opt.workers, cli: b.cli }, dir),
    accounts: accounts(
      false,
      chains.has('laneNotOurs') || chains.has('laneOurs') || chains.has('laneOff'),
      chains.has('conditionsOn') || chains.has('conditionsOff'),
      chains.has('untracked'),
    ),
    files: { [LANE_KEY_FILE]: LANE_KEY },
    cli: b.cli,
    parent: run.tmp,
    env,
  },
});
say(
  `base ${baseRef} (${base.commit.slice(0, 12)}) against this tree (${candidateCommit.slice(0, 12)}${dirty ? ' with uncommitted changes' : ''}); starting both under callgrind`,
);
const ECHO_PORT = PORT + 4;
const [counted, echo] = await Promise.all([
  Promise.all(
    builds.map(async (b): Promise<Counted> => {
      const mapFile = join(run.tmp, `slots.${b.build}.json`);
      const srv = await cg.start(b.build, spec(b, { ...process.env, TXGATE_STAGE_PROBES: addon, TXGATE_STAGE_PROBES_MAP: mapFile }));
      return { build: b.build, server: srv, mapFile, driver: driverOf(b.port) };
    }),
  ),
  opt.echo
    ? cg
        .start('echo', { port: ECHO_PORT, args: [server('echo-server'), String(ECHO_PORT)] })
        .then((srv): Counted => ({ build: 'echo', server: srv, mapFile: null, driver: new Driver(8) }))
    : null,
]);
const all = [...counted, ...(echo !== null ? [echo] : [])];
const rounds = new Rounds(
  cg,
  run.tmp,
  SLOTS,
  { requests: opt.requests, retries: opt.retries, maxJit: 0.02 },
  opt.keep === undefined ? undefined : run.userPath(opt.keep),
);
const chainIdScenario = MAIN[0]!;
say(`both started (${secs()}); warming up`);
if (echo !== null) await rounds.warm([echo], [chainIdScenario], opt.warmup, () => undefined);
await rounds.warm(counted, scenarios, opt.warmup, (r) => r % 4 === 0 && say(`warm-up round ${r}/${opt.warmup} (${secs()})`));
for (const b of all) cg.control('--instr=on', b.server.child.pid!);
say(`warmed (${secs()}); counting`);
const got = new Map(scenarios.map((s) => [s.name, [[], []] as [Round[], Round[]]]));
const echoRounds: Round[] = [];
for (let r = 0; r < opt.rounds; r++) {
  const order = r % 2 === 0 ? [0, 1] : [1, 0];
  for (const s of r % 2 === 0 ? scenarios : [...scenarios].reverse()) for (const i of order) got.get(s.name)![i]!.push(await rounds.steady(counted[i]!, s));
  if (echo !== null) echoRounds.push(await rounds.steady(echo, chainIdScenario));
  say(`round ${r + 1}/${opt.rounds} (${secs()})`);
}
for (const b of all) {
  b.driver.closeLanes();
  await b.server.stop();
}

// Bytes allocated per request: each build started plain (node alone, a 1-MB young generation).
const bytes = new Map<string, [number, number]>();
if (countBytes) {
  say(`counting bytes allocated per request (${secs()})`);
  const driver = new Driver(8);
  for (const [i, b] of builds.entries()) {
    const srv = await cg.start(`${b.build}-plain`, spec(b, process.env), true);
    for (const s of scenarios) {
      const pair = bytes.get(s.name) ?? [Number.NaN, Number.NaN];
      pair[i] = await allocation(srv, driver, s);
      bytes.set(s.name, pair);
    }
    driver.closeLanes();
    await srv.stop();
  }
}

const tolerances = guardFile?.scenarios ?? {};
const compared: Compared[] = scenarios.map((s) =>
  compare(s.name, got.get(s.name)!, bytes.get(s.name), tolerances[s.name]?.tolerance, tolerances[allocatedName(s.name)]?.tolerance, guardFile?.parts ?? {}),
);
const profile: ProfileRun = {
  date: new Date().toISOString(),
  node: process.version,
  base: { ref: baseRef, commit: base.commit },
  candidate: { commit: candidateCommit, dirty },
  requests: opt.requests,
  warmup: opt.warmup,
  rounds: opt.rounds,
  guard: opt.guard,
  ...(pinned ? { workers: opt.workers, worker: opt.worker } : {}),
  ...(echo !== null ? { echo: median(echoRounds.map((r) => r.total)) } : {}),
  compared,
};
process.stdout.write(consoleTable(profile));
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
const label = opt.label!;
if (!/^[\w.-]+$/.test(label)) {
  process.stderr.write(`bench:profile: --label ${label}: letters, digits, '.', '_' and '-' only\n`);
  process.exit(2);
}
run.write(`${label}.json`, resultsJson('profile', profile));
run.write(`${label}.md`, profileMarkdown(profile, label));
run.write(`${label}.svg`, profileSvg(profile));
const html = run.write(`${label}.html`, profileHtml(profile));
const failed = compared.filter((c) => c.failed.length > 0);
if (opt.guard)
  process.stdout.write(
    failed.length === 0
      ? `guard: pass, every total, stage and byte count within its bound (docs/performance.md, "The guard")\n`
      : `guard: FAIL: ${failed.map((c) => `${c.scenario} (${c.failed.join(', ')})`).join('; ')} dearer than the base beyond its bound (docs/performance.md, "The guard")\n`,
  );
process.stdout.write(`(${minutes} min) the tables and the picture: ${html} (${label}.md, .svg and .json beside it)\n`);
process.exit(opt.guard && failed.length > 0 ? 1 : 0);
