/**
 * `npm run bench:limit`: the hot path against its own limit. In one callgrind run, beside txgate
 * and the bare uWS echo, each irreducible part of a scenario measured alone by the parts server
 * (bench/servers/limit-server.ts) with the same requests: the transport, the envelope read,
 * decode and signature check, the account lookup, the forward and the audit lines. Per scenario:
 * each part, their sum, txgate, txgate / sum, txgate / echo, and what remains named by part of
 * txgate's own request: its stages on the request's own path, the answer and what lies outside
 * them, counted with bench:profile's stage probes in the same rounds (bench/profile/).
 *
 * The echo and the parts server are counted as bench/instr/measure.ts counts (rounds between
 * `callgrind_control -z` and `-d`, interleaved, noisy rounds measured again), txgate as
 * bench:profile counts it (bench/profile/rounds.ts); every server runs with fixed V8 seeds and
 * young generation, so that two runs of one tree differ by less. Needs valgrind and a C compiler
 * (the probes); installs nothing. Loopback only.
 */
import { spawnSync } from 'node:child_process';
import { keySha256 } from '../../src/accounts/keys.js';
import { RESULTS_DIR } from '../common/paths.js';
import { round, spread } from '../common/figures.js';
import { startBench } from '../common/bench-run.js';
import { server } from '../common/paths.js';
import { median } from '../common/figures.js';
import { buildProbes, PROFILE_FLAGS, SLOTS } from '../profile/probes.js';
import { Rounds, type Counted, type Round } from '../profile/rounds.js';
import { join } from 'node:path';
import { resultsJson } from '../common/results-schema.js';
import { startStub } from '../servers/stub-sequencer.js';
import type { Part, PartSetup } from '../servers/limit-server.js';
import { Callgrind, needCallgrind } from '../instr/callgrind.js';
import { Driver } from '../instr/drive.js';
import { accounts, CHAINS, keys, LANE_KEY, LANE_KEY_FILE, MAIN, txgateConfig, type Scenario } from '../instr/scenarios.js';
import { askOnce, LIMIT, partName, partsOf, type Captured } from '../limit/parts.js';
import { limitRow, limitTables, type LimitRow } from '../limit/report.js';

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
  'max-spread': {
    kind: 'number',
    min: 0.1,
    quick: 10,
    full: 5,
    help: "bound on a measurement's rounds' spread, % of their median: one beyond it is flagged ⚠ noisy in the table",
  },
  retries: {
    kind: 'int',
    min: 0,
    quick: 2,
    full: 3,
    help: 'times a round in which the collector ran or TurboFan compiled more than 5% of the count is counted again',
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
const chosen = LIMIT.filter((l) => opt.scenarios === undefined || opt.scenarios.includes(l.name));
const scenarioOf = (name: string) => MAIN.find((s) => s.name === name)!;
const cg = new Callgrind(run.tmp, run.children, PROFILE_FLAGS);
const addon = buildProbes(run.tmp);
const slotsFile = join(run.tmp, 'slots.txgate.json');
const driver = new Driver(opt.connections);
// --- the servers: the stubs outside callgrind, the echo, txgate and the parts server under it ---
const BASE = opt['port-base'];
const STUB = BASE + 100;
const chains = new Set<keyof typeof CHAINS>(['receipt', 'tracked', 'ws', 'laneNotOurs']);
await startStub({ port: STUB, chainId: 4663, holder: null, children: run.children });
for (const c of chains) await startStub({ port: STUB + CHAINS[c].stub, chainId: CHAINS[c].chainId, holder: null, children: run.children });
const started = Date.now();
process.stderr.write(
  `valgrind ${spawnSync('valgrind', ['--version'], { encoding: 'utf8' }).stdout.trim()}, node ${process.version} ${PROFILE_FLAGS.join(' ')}; ${opt.requests} requests a round, ${opt.warmup} warm-up + ${opt.rounds} measured rounds, ${opt.connections} connections\n`,
);
const echoP = cg.start('echo', { port: BASE, args: [server('echo-server'), String(BASE)] });
const txgateP = cg.start('txgate', {
  port: BASE + 2,
  txgate: {
    config: (dir) => txgateConfig({ stub: STUB, port: BASE + 2, lane4663: false, chains }, dir),
    accounts: accounts(false, true),
    files: { [LANE_KEY_FILE]: LANE_KEY },
    parent: run.tmp,
    env: { ...process.env, TXGATE_STAGE_PROBES: addon, TXGATE_STAGE_PROBES_MAP: slotsFile },
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

// --- counting, each server in turn, as bench:profile counts (bench/profile/rounds.ts) --------------
const rounds = new Rounds(cg, run.tmp, SLOTS, { requests: opt.requests, retries: opt.retries, maxJit: 0.05 });
/** Each scenario's rounds on a server: warmed, then counted with the scenarios interleaved; the server stopped. */
const countAll = async (c: Counted, scenarios: readonly Scenario[]): Promise<Map<string, Round[]>> => {
  await rounds.warm([c], scenarios, opt.warmup, () => undefined);
  cg.control('--instr=on', c.server.child.pid!);
  const got = new Map<string, Round[]>(scenarios.map((s) => [s.name, []]));
  for (let r = 0; r < opt.rounds; r++) {
    for (const s of r % 2 === 0 ? scenarios : [...scenarios].reverse()) got.get(s.name)!.push(await rounds.steady(c, s));
    process.stderr.write(`${c.build}: round ${r + 1}/${opt.rounds} of ${scenarios.length} scenarios\n`);
  }
  c.driver.closeLanes();
  await c.server.stop();
  return got;
};
const echoRounds = (await countAll({ build: 'echo', server: await echoP, mapFile: null, driver }, [MAIN[0]!])).get(MAIN[0]!.name)!;
// txgate with its stage probes: every chosen scenario (and the one a row is counted over), each round attributed.
const txgateSet = [...new Set([...chosen.map((l) => l.name), ...chosen.flatMap((l) => (l.over !== undefined ? [l.over] : []))])].map(scenarioOf);
const txgateRounds = await countAll({ build: 'txgate', server: txgate, mapFile: slotsFile, driver }, txgateSet);
const partsRounds = await countAll({ build: 'parts', server: await partsP, mapFile: null, driver }, partScenarios);

// --- the report ---------------------------------------------------------------------------------
/** A measurement's figures: the median of its rounds (without the collector and TurboFan's compiling) and their spread. */
const figuresOf = (server: string, scenario: string, rs: readonly Round[]) => {
  const xs = rs.map((r) => r.total);
  return { server, scenario, median: median(xs), min: Math.min(...xs), max: Math.max(...xs), spread: spread(xs) };
};
const totalsOf = (rs: readonly Round[] | undefined) => rs?.map((r) => r.total) ?? [];
/** A scenario's txgate parts on its own path (medians of its rounds), in the request's order. */
const partsOfTxgate = (name: string) => {
  const rs = txgateRounds.get(name)!;
  const names = [...new Set(rs.flatMap((r) => Object.keys(r.parts)))];
  return new Map(names.map((n) => [n, median(rs.map((r) => r.parts[n] ?? 0))]));
};
const totalOf = (name: string) => txgateRounds.get(name)?.map((r) => r.total);
const rows: LimitRow[] = chosen.flatMap((l) => {
  const t = totalOf(l.name);
  if (t === undefined) return [];
  const partRounds = new Map<Part, readonly number[]>();
  for (const p of ['transport', ...l.parts] as Part[]) {
    const rs = partsRounds.get(partName(l.name, p));
    if (rs !== undefined) partRounds.set(p, totalsOf(rs));
  }
  if (!partRounds.has('transport')) return [];
  const over = l.over === undefined ? undefined : totalOf(l.over);
  return [
    limitRow({
      l,
      txgate: t,
      echo: totalsOf(echoRounds),
      parts: partRounds,
      stages: partsOfTxgate(l.name),
      ...(over !== undefined ? { overMedian: median(over) } : {}),
    }),
  ];
});
const tables = limitTables(rows);
process.stdout.write('\n' + tables.join('\n') + '\n');
const minutes = round((Date.now() - started) / 60_000, 1);
const header = [
  '# bench:limit: the hot path against its limit',
  '',
  `Instructions per request under callgrind without the collector's, median of ${opt.rounds} rounds of ${opt.requests} requests (${opt.warmup} warm-up), ${opt.connections} connections; node ${process.version} ${PROFILE_FLAGS.join(' ')}. A part is its port's count less the transport's in the same round.`,
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
    maxSpread: opt['max-spread'] / 100,
    nodeFlags: [...PROFILE_FLAGS],
    echo: { median: median(totalsOf(echoRounds)), spread: spread(totalsOf(echoRounds)) },
    rows,
    results: [figuresOf('echo', MAIN[0]!.name, echoRounds), ...[...partsRounds].map(([name, rs]) => figuresOf('parts', name, rs))],
  }),
);
process.stdout.write(`\n(${minutes} min) written to ${mdPath} and limit.json${run.outDir === RESULTS_DIR ? '' : ' (--save writes bench/results/)'}\n`);
process.exit(0);
