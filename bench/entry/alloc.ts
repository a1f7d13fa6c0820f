/**
 * `npm run bench:alloc`: the heap bytes txgate allocates per request in the guarded scenarios
 * (eth_chainId, the 401, a valid submission over HTTP and to a ws:// sequencer), counted as
 * bench:profile --bytes and the guard count them (bench/instr/allocation.ts): txgate
 * started plain (node alone, a 1-MB young generation, --trace-gc-nvp), 2,000 requests of warm-up,
 * then whole young generations over 20,000 requests. No valgrind: a minute or two, beside any
 * callgrind run. With --base REF another build is counted in the same run,
 * round by round beside this one, and each scenario's candidate / base given; with --floor the
 * conforming floor (bench/servers/floor-server.ts) in the scenarios it serves, the reference of
 * the allocation target (docs/performance.md).
 */
import { join } from 'node:path';
import { keySha256 } from '../../src/accounts/keys.js';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { median, round } from '../common/figures.js';
import { startBench } from '../common/bench-run.js';
import { baseBuildOrExit } from '../common/base-build.js';
import { resultsJson } from '../common/results-schema.js';
import { REPO, server } from '../common/paths.js';
import { spread } from '../common/figures.js';
import { startStub } from '../servers/stub-sequencer.js';
import { Callgrind, type ServerDef } from '../instr/callgrind.js';
import { Driver } from '../instr/drive.js';
import { allocation } from '../instr/allocation.js';
import { accounts, CHAINS, FLOOR, keys, MAIN, MIN_TIP, txgateConfig, WS_SEQUENCER } from '../instr/scenarios.js';

const SCENARIOS = ['eth_chainId', '401 unauthorized', 'valid submission', WS_SEQUENCER];
const run = startBench(
  'bench:alloc',
  'Heap bytes txgate allocates per request (eth_chainId, 401, valid submission over HTTP and to a ws:// sequencer), started plain; with --base beside another build.',
  {
    floor: {
      kind: 'flag',
      help: 'the conforming floor (bench/servers/floor-server.ts) counted too, each round, in the scenarios it serves (not the ws:// sequencer)',
    },
    base: {
      kind: 'text',
      arg: 'REF',
      help: 'another build (a commit, branch or tag, built apart as bench:profile builds its base), counted round by round beside this one',
    },
    rounds: {
      kind: 'int',
      median: true,
      quick: 3,
      full: 5,
      help: 'rounds per build, an odd number ≥ 3 (a txgate started afresh each; the median is the figure)',
    },
    'port-base': { kind: 'int', min: 1024, quick: 18650, help: 'first of the loopback ports (txgates PORT, PORT+2; stubs PORT+100, PORT+102)' },
  },
);
const opt = run.opt;
const baseCli = opt.base === undefined ? undefined : baseBuildOrExit('bench:alloc', opt.base).cli;
const BASE = opt['port-base'];
const STUB = BASE + 100;
const chains = new Set<keyof typeof CHAINS>(['ws']);
await startStub({ port: STUB, chainId: 4663, holder: null, children: run.children });
await startStub({ port: STUB + CHAINS.ws.stub, chainId: CHAINS.ws.chainId, holder: null, children: run.children });
const cg = new Callgrind(run.tmp, run.children);
const driver = new Driver(8);
const scenarios = MAIN.filter((s) => SCENARIOS.includes(s.name));
/** What is counted: txgate builds by their cli.js, and with --floor the floor (null), each started afresh every round. */
const builds: (readonly [string, string | null])[] = [
  ...(baseCli !== undefined ? [['base', baseCli] as const] : []),
  ['candidate', join(REPO, 'dist/src/cli.js')],
  ...(opt.floor ? [['floor', null] as const] : []),
];
const served = (build: string) => (build === 'floor' ? scenarios.filter((s) => FLOOR.has(s.name)) : scenarios);
/** Bytes per request by build, then scenario: one figure per round. */
const bytes = new Map(builds.map(([name]) => [name, new Map(served(name).map((s) => [s.name, [] as number[]]))]));
for (let r = 0; r < opt.rounds; r++) {
  for (const [i, [name, cli]] of builds.entries()) {
    const port = BASE + 2 * i;
    const def: ServerDef =
      cli === null
        ? {
            port,
            args: [
              server('floor-server'),
              String(port),
              join(run.tmp, 'floor.log'),
              keySha256(keys.load),
              `http://127.0.0.1:${STUB}`,
              ANVIL_TIP_ADDRESS,
              MIN_TIP.toString(),
            ],
          }
        : {
            port,
            txgate: {
              config: (dir) => txgateConfig({ stub: STUB, port, lane4663: false, chains, cli }, dir),
              accounts: accounts(false, false),
              cli,
              parent: run.tmp,
            },
          };
    // A server that does not start (a build that fails, a port taken) ends the run in one line.
    const srv = await cg.start(`${name}-plain`, def, true).catch((e: unknown) => {
      process.stderr.write(`bench:alloc: ${name} did not start: ${(e as Error).message.split('\n')[0]}\n`);
      process.exit(1);
    });
    for (const s of served(name))
      bytes
        .get(name)!
        .get(s.name)!
        .push(await allocation(srv, driver, s));
    driver.closeLanes();
    await srv.stop();
  }
  process.stderr.write(`bench:alloc: round ${r + 1}/${opt.rounds}\n`);
}

const lines = ['| scenario | build | B per request (median) | rounds | spread |', '|---|---|--:|---|--:|'];
const results = SCENARIOS.flatMap((scenario) =>
  builds.flatMap(([build]) => {
    const xs = bytes.get(build)!.get(scenario);
    if (xs === undefined) return [];
    const m = median(xs);
    lines.push(`| ${scenario} | ${build} | ${m.toFixed(0)} | ${xs.map((x) => x.toFixed(0)).join(', ')} | ${round(spread(xs) * 100, 1)}% |`);
    return { scenario, build, median: m, rounds: xs, spread: spread(xs) };
  }),
);
const of = (build: string, scenario: string) => {
  const xs = bytes.get(build)?.get(scenario);
  return xs === undefined ? undefined : median(xs);
};
for (const scenario of SCENARIOS) {
  const c = of('candidate', scenario)!;
  for (const ref of ['base', 'floor']) {
    const b = of(ref, scenario);
    if (b !== undefined) lines.push('', `${scenario}: candidate / ${ref} ${(c / b).toFixed(3)} (${(c - b).toFixed(0)} B)`);
  }
}
process.stdout.write(lines.join('\n') + '\n');
run.write('alloc.md', lines.join('\n') + '\n');
const path = run.write('alloc.json', resultsJson('alloc', { node: process.version, date: new Date().toISOString(), rounds: opt.rounds, results }));
process.stdout.write(`written to ${path}\n`);
process.exit(0);
