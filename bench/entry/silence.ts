/**
 * `npm run bench:silence`: the first order after a silence against the thousandth.
 *
 * A desk's traffic: serial valid submissions (tipped transfers, distinct) on one kept-alive
 * connection. Each round has a phase per transport (an http:// and a ws:// sequencer), each with
 * fresh processes: this tree's txgate (with `--base REF` another build's beside it) on core 0,
 * with no txgate of the other transport beside it (a deployment runs a process a core: a txgate
 * that rehearses is never idle beside another's first order), each in front of a stub
 * sequencer of its own (uWebSockets.js, bench/servers/stub-sequencer.ts: idle HTTP connections
 * closed after about 10 s, idle WebSockets after `--ws-idle-close` s) on core 1, with the
 * reference beside them: a stub alone, straight from the client. The client
 * (bench/drivers/silence-client.ts, core 1) sends to every target in turn, request by request: a
 * warm-up, a steady stretch, then `--reps` times a silence and a burst. Per round and target: the
 * steady p50, the first after each silence (the median of the repetitions), the p50 of the first
 * 20 and of the first 100 (every repetition's together); what txgate adds is each figure through
 * txgate minus the same figure of the stub alone, in the same phase. The figures: the medians of
 * the rounds, with how far the rounds spread (flagged past 50%: figures of a tenth of a
 * millisecond on a shared host) and the host's load average at each round's start. This tree runs
 * with `rehearsal.everyMs` at `--rehearsal` (10 ms, as a desk sets it; src/rehearsal/), a --base
 * build with its own defaults; `--rehearsal 0` measures this tree without it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { keySha256 } from '../../src/accounts/keys.js';
import { initCrypto } from '../../src/base/native.js';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { submissionBodies } from '../common/transfers.js';
import { baseBuildOrExit } from '../common/base-build.js';
import { startBench } from '../common/bench-run.js';
import { median, medianName, round, roundsSpread } from '../common/figures.js';
import { driver, RESULTS_DIR } from '../common/paths.js';
import { resultsJson, type SilenceRun } from '../common/results-schema.js';
import { startTxgate } from '../common/txgate.js';
import { startStub } from '../servers/stub-sequencer.js';
import { silenceTable } from '../common/silence-table.js';

const run = startBench(
  'bench:silence',
  'The first submission after a silence against the steady ones: serial submissions on one kept-alive connection, through txgate (http:// and ws:// sequencers) beside the stub alone.',
  {
    silence: { kind: 'int', quick: 15, help: 'seconds of silence before each burst' },
    reps: {
      kind: 'int',
      min: 0,
      quick: 0,
      help: "silences (each followed by a burst) per round, in each transport's phase (0: one per target of a phase, 2, or 3 with --base, so that each is the first after a silence once a round: the client's own wake-up falls on each alike)",
    },
    rounds: { kind: 'int', median: true, quick: 3, help: 'rounds, fresh processes each, an odd number ≥ 3 (the median is reported)' },
    transports: { kind: 'list', choices: ['http', 'ws'], help: "the sequencer's transport behind txgate" },
    warmup: { kind: 'int', quick: 500, help: 'serial submissions to each target before the steady stretch' },
    steady: { kind: 'int', quick: 500, help: 'serial submissions to each target whose p50 is the steady figure' },
    burst: { kind: 'int', quick: 100, help: 'serial submissions after each silence' },
    'keep-alive': {
      kind: 'int',
      min: 0,
      quick: 5,
      help: "seconds between the client's keep-alive eth_chainId calls in a silence, to every target alike, as the client kit's default (0: none, and the servers close the idle connections)",
    },
    rehearsal: {
      kind: 'int',
      min: 0,
      quick: 10,
      help: "this tree's `rehearsal.everyMs` (src/rehearsal/: its submission path run every N ms of a silence, as a desk sets it; 0: off); a --base build runs its own defaults",
    },
    'ws-idle-close': { kind: 'int', min: 0, quick: 10, help: 'seconds after which the ws:// stub closes a WebSocket that carried no message (0: never)' },
    'log-level': { kind: 'text', quick: 'info', help: "txgate's log level (info: a desk's, a line per request)" },
    base: { kind: 'text', help: 'another build (a commit, branch or tag) measured beside this one, each round (the figures before a change)', arg: 'REF' },
  },
);
const opt = run.opt;
const transports = (opt.transports ?? ['http', 'ws']) as readonly ('http' | 'ws')[];
const KEY = 'txg_silence_' + randomBytes(24).toString('base64url');
const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const cores = Number(spawnSync('nproc').stdout?.toString().trim() || '1');
const GATE_CORE = '0';
const OTHER_CORE = cores >= 2 ? String(cores - 1) : '0';
const stubCores = hasTaskset ? { cores: OTHER_CORE } : {};
const pin = (core: string) => (hasTaskset ? ['taskset', '-c', core] : []);
const say = (s: string) => process.stdout.write(s + '\n');
if (!hasTaskset) say('taskset is not available: the processes are not pinned to cores');

const base = opt.base === undefined ? null : baseBuildOrExit('bench:silence', opt.base);
const builds = [{ name: 'this tree', cli: undefined as string | undefined }, ...(base === null ? [] : [{ name: `base ${base.ref}`, cli: base.cli }])];

await initCrypto();
/** Silences a phase: by default one per target, the order turned at each, so each target takes the first order after a silence once. */
const reps = opt.reps > 0 ? opt.reps : builds.length + 1;
const count = opt.warmup + opt.steady + reps * opt.burst;
process.stderr.write(`signing ${count} transactions…\n`);
const bodies = submissionBodies(count);

const accounts = {
  accounts: [
    {
      id: 'desk',
      keySha256: [keySha256(KEY)],
      grants: [{ chainId: 4663, rateLimit: { perSecond: 1e6, burst: 1e6 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: '1000000000000' }],
    },
  ],
};
let port = 18400;

interface Target {
  readonly name: string;
  readonly url: string;
  /** The txgate's build and transport; null for the stub alone. */
  readonly build: string | null;
  readonly transport: 'http' | 'ws' | null;
}

/** The reference of a transport's phase: the stub alone measured beside its txgates. */
const refName = (t: 'http' | 'ws' | null): string => (transports.length === 1 || t === null ? 'stub alone' : `stub alone (${t}:// phase)`);

type Result = { name: string; steady: number[]; bursts: number[][]; bad: number; connections: number };

/**
 * One round: a phase per transport, each with fresh processes (its txgates alone on core 0, as a
 * deployment runs one process a core: a txgate that rehearses is never idle beside another's first
 * order), the client's plan, every target's times; the processes stopped.
 */
async function oneRound(): Promise<{ targets: Target[]; result: Result[] }> {
  const targets: Target[] = [];
  const result: Result[] = [];
  for (const t of transports) {
    const phase = await onePhase(t);
    targets.push(...phase.targets);
    result.push(...phase.result);
  }
  return { targets, result };
}

/** One transport's phase of a round: the stub alone and each build's txgate in front of a stub of its own. */
async function onePhase(t: 'http' | 'ws'): Promise<{ targets: Target[]; result: Result[] }> {
  const children = run.children;
  const refPort = port++;
  await startStub({ port: refPort, ...stubCores, children });
  const targets: Target[] = [{ name: refName(t), url: `http://127.0.0.1:${refPort}`, build: null, transport: null }];
  const stops: (() => Promise<void>)[] = [];
  for (const b of builds) {
    const stubPort = port++;
    await startStub({ port: stubPort, ...stubCores, children, wsIdleCloseS: t === 'ws' ? opt['ws-idle-close'] : 0 });
    const gate = await startTxgate({
      config: {
        listen: { host: '127.0.0.1', port: port++ },
        internal: { enabled: false },
        workers: 1,
        log: { level: opt['log-level'] },
        chains: [{ chainId: 4663, hosts: ['127.0.0.1', 'localhost'], sequencers: [`${t}://127.0.0.1:${stubPort}`] }],
        // This tree's setting only: a base build may not know it.
        ...(b.cli === undefined ? { rehearsal: { everyMs: opt.rehearsal } } : {}),
      },
      accounts,
      ...(b.cli !== undefined ? { cli: b.cli } : {}),
      // As the production command lines start it (README, docs/operations.md).
      nodeArgs: ['--no-memory-reducer'],
      prefix: pin(GATE_CORE),
      log: 'ignore',
      parent: run.tmp,
      children,
    });
    stops.push(() => gate.stop());
    targets.push({ name: `${b.name}, ${t}:// sequencer`, url: gate.url, build: b.name, transport: t });
  }
  const file = join(run.tmp, `plan-${port}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      targets: targets.map(({ name, url }) => ({ name, url })),
      key: KEY,
      bodies,
      warmup: opt.warmup,
      steady: opt.steady,
      reps,
      silenceS: opt.silence,
      burst: opt.burst,
      keepAliveS: opt['keep-alive'],
    }),
  );
  const out = await new Promise<string>((resolve, reject) => {
    const c = spawn(
      pin(OTHER_CORE)[0] ?? process.execPath,
      [...pin(OTHER_CORE).slice(1), ...(hasTaskset ? [process.execPath] : []), driver('silence-client'), file],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let text = '';
    c.stdout.on('data', (d: Buffer) => (text += d));
    c.stderr.on('data', (d: Buffer) => (text += d));
    c.on('exit', () => (/RESULT /.test(text) ? resolve(text) : reject(new Error(`the client failed: ${text.slice(-2000)}`))));
  });
  await Promise.all(stops.map((s) => s()));
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.length = 0;
  return { targets, result: (JSON.parse(/RESULT (\{.*\})/.exec(out)![1]!) as { targets: never }).targets };
}

const p50 = (xs: readonly number[]) => median(xs);
const figuresOf = (steady: readonly number[], bursts: readonly (readonly number[])[]) => ({
  steady: p50(steady),
  first: median(bursts.map((b) => b[0]!)),
  first20: p50(bursts.flatMap((b) => b.slice(0, 20))),
  first100: p50(bursts.flatMap((b) => b.slice(0, 100))),
});
type Figures = ReturnType<typeof figuresOf>;
const FIELDS = ['steady', 'first', 'first20', 'first100'] as const;

const rounds: { loadAverage: number[]; figures: Record<string, Figures>; bad: number; connections: Record<string, number> }[] = [];
let names: Target[] = [];
for (let r = 0; r < opt.rounds; r++) {
  const loadAverage = loadavg().map((x) => round(x, 2));
  say(`round ${r + 1} of ${opt.rounds} (load average ${loadAverage.join(', ')}): ${reps} silences of ${opt.silence} s in each transport's phase…`);
  const { targets, result } = await oneRound();
  names = targets;
  const figures: Record<string, Figures> = {};
  const connections: Record<string, number> = {};
  let bad = 0;
  for (const t of result) {
    figures[t.name] = figuresOf(t.steady, t.bursts);
    connections[t.name] = t.connections;
    bad += t.bad;
  }
  for (const t of targets.filter((x) => x.build !== null)) {
    const f = figures[t.name]!;
    const ref = figures[refName(t.transport)]!;
    say(
      `  ${t.name}: adds steady ${round((f.steady - ref.steady) * 1000, 0)} µs, the first after silence ${round((f.first - ref.first) * 1000, 0)} µs, the first 20's p50 ${round((f.first20 - ref.first20) * 1000, 0)} µs`,
    );
  }
  rounds.push({ loadAverage, figures, bad, connections });
}

/** Every target's figures, and what txgate adds, as the medians of the rounds with their spread. */
const rows = names.map((t) => {
  const of = (field: (typeof FIELDS)[number], added: boolean) =>
    rounds.map((r) => round((r.figures[t.name]![field] - (added ? r.figures[refName(t.transport)]![field] : 0)) * 1000, 1));
  const figure = (xs: number[]) => ({ median: median(xs), rounds: xs, spread: round(roundsSpread(xs), 3) });
  return {
    target: t.name,
    build: t.build,
    transport: t.transport,
    through: Object.fromEntries(FIELDS.map((f) => [f, figure(of(f, false))])) as Record<(typeof FIELDS)[number], ReturnType<typeof figure>>,
    added:
      t.build === null ? null : (Object.fromEntries(FIELDS.map((f) => [f, figure(of(f, true))])) as Record<(typeof FIELDS)[number], ReturnType<typeof figure>>),
  };
});
const doc: SilenceRun = {
  node: process.version,
  date: new Date().toISOString(),
  cores,
  pinned: hasTaskset,
  silenceS: opt.silence,
  reps,
  rounds: opt.rounds,
  warmup: opt.warmup,
  steady: opt.steady,
  burst: opt.burst,
  wsIdleCloseS: opt['ws-idle-close'],
  clientKeepAliveS: opt['keep-alive'],
  rehearsalMs: opt.rehearsal,
  phased: true,
  logLevel: opt['log-level'] ?? 'info',
  base: base === null ? null : base.commit,
  transports: [...transports],
  loadAverages: rounds.map((r) => r.loadAverage),
  bad: rounds.reduce((n, r) => n + r.bad, 0),
  rows,
};
say('');
const md = silenceTable(doc);
say(md);
say(`\nthe figures: ${medianName(opt.rounds)}; answers not a 200 with a result: ${doc.bad}`);
if (run.outDir !== RESULTS_DIR) say(`(written outside bench/results/: --save writes the committed run)`);
const mdPath = run.write('silence.md', `# bench:silence\n\n${md}\n`);
run.write('silence.json', resultsJson('silence', doc));
say(`\nwritten to ${mdPath} and silence.json`);
process.exit(0);
