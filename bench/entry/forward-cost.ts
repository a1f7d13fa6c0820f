/**
 * `bash scripts/built.sh bench/entry/forward-cost`: instructions per call of the forward's client alone (callgrind), the
 * HTTP Sequencer against the WsUpstream, each calling the stub sequencer (uninstrumented, on
 * the other core) with a submission, 8 calls in flight, in the same run. What bench:instr's
 * valid submissions differ by, without the rest of txgate's request around it: steadier on a
 * busy host, where a whole request's rounds spread far.
 *
 * Each client (forward-client.ts) runs under callgrind with instrumentation off while it warms
 * up, then `--rounds` rounds of `--calls` calls, each between callgrind_control -z and -d. Then
 * (`--top`) the functions: one more client, run with node's --perf-basic-prof so JIT-compiled
 * JavaScript can be named from its map (callgrind sees only addresses; the map's logging adds
 * work of its own to every GC, so that run's total is not the figure), one round, self
 * instructions per call by function. `--keep DIR` keeps the dumps and the map.
 *
 * Needs valgrind (Debian: apt-get install -y valgrind). Loopback only.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { topFunctions } from '../common/callgrind-top.js';
import { startBench } from '../common/bench-run.js';
import { median, round } from '../common/figures.js';
import { startStub } from '../servers/stub-sequencer.js';
import { needCallgrind } from '../instr/callgrind.js';
import { driver } from '../common/paths.js';

const run = startBench('bench:forward-cost', "Instructions per call of the forward's client alone under callgrind: HTTP against ws://, the same run.", {
  calls: { kind: 'int', min: 100, quick: 5000, full: 20000, help: 'calls per measured round' },
  rounds: {
    kind: 'int',
    min: 1,
    quick: 4,
    full: 6,
    help: 'measured rounds per client (after one instrumented round left out: the first after the switch costs up to 2x, every time)',
  },
  warmup: { kind: 'int', min: 0, quick: 30000, help: 'uninstrumented warm-up calls' },
  concurrency: { kind: 'int', min: 1, quick: 8, help: 'calls in flight' },
  top: {
    kind: 'int',
    min: 0,
    quick: 25,
    help: 'functions listed per client (self instructions per call, from one more round in a client run with --perf-basic-prof), 0: none',
  },
  keep: { kind: 'text', arg: 'DIR', help: 'keep the callgrind dumps in DIR' },
});
const opt = run.opt;
const dir = run.tmp;
needCallgrind('bench:forward-cost');
const cores = Number(spawnSync('nproc').stdout.toString().trim());
const STUB_CORE = cores >= 2 ? String(cores - 1) : '0';
const PORT = 18160;

function waitLine(child: ChildProcess, want: string, ms = 600_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const t = setTimeout(() => reject(new Error(`no '${want}' within ${ms} ms: ${buf}`)), ms);
    const on = (d: Buffer) => {
      buf += d.toString();
      if (buf.split('\n').includes(want)) {
        clearTimeout(t);
        child.stdout!.off('data', on);
        resolve();
      }
    };
    child.stdout!.on('data', on);
    child.once('exit', (c) => reject(new Error(`exited ${c} before '${want}': ${buf}`)));
  });
}
const control = (flag: string, pid: number) => {
  const r = spawnSync('callgrind_control', [flag, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${flag}: ${r.stderr}`);
};

const stub = await startStub({ port: PORT, cores: STUB_CORE, children: run.children });

interface Row {
  client: string;
  url: string;
  perCall: number[];
  median: number;
  spread: number;
  top: { fn: string; perCall: number }[];
}
const rows: Row[] = [];
/** One client under callgrind: its rounds' instructions per call, and the last dump. */
async function measureClient(tag: string, url: string, rounds: number, named: boolean): Promise<{ perCall: number[]; dump: string; perfMap: string }> {
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--smc-check=all-non-file',
      '--dump-instr=no',
      '--collect-jumps=no',
      `--callgrind-out-file=${join(dir, `cg.${tag}.%p`)}`,
      'node',
      '--single-threaded',
      ...(named ? ['--perf-basic-prof'] : []),
      driver('forward-client'),
      url,
      String(opt.concurrency),
      String(opt.calls),
      String(opt.warmup),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'], cwd: dir },
  );
  run.children.push(child);
  await waitLine(child, 'warm');
  const pid = child.pid!;
  control('--instr=on', pid);
  const perCall: number[] = [];
  const prefix = `cg.${tag}.${pid}.`;
  const dumps = () =>
    readdirSync(dir)
      .filter((f) => f.startsWith(prefix))
      .sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)));
  for (let r = 0; r <= rounds; r++) {
    control('-z', pid);
    const done = waitLine(child, 'done');
    child.stdin!.write('go\n');
    await done;
    control('-d', pid);
    const text = readFileSync(join(dir, dumps().at(-1)!), 'utf8');
    const per = Number(/^summary: (\d+)/m.exec(text)![1]) / opt.calls;
    if (r > 0) perCall.push(per);
    process.stderr.write(`${tag}${named ? ' (named)' : ''}: round ${r}/${rounds} ${round(per / 1000, 1)}k instr/call${r === 0 ? ' (left out)' : ''}\n`);
  }
  const perfMap = `/tmp/perf-${pid}.map`;
  const dump = join(dir, dumps().at(-1)!);
  if (opt.keep !== undefined) {
    const keep = run.userPath(opt.keep);
    spawnSync('mkdir', ['-p', keep]);
    for (const f of dumps()) copyFileSync(join(dir, f), join(keep, f));
    if (existsSync(perfMap)) copyFileSync(perfMap, join(keep, `perf-${pid}.map`));
  }
  child.stdin!.write('end\n');
  await new Promise((r) => child.once('exit', r));
  return { perCall, dump, perfMap };
}

for (const [client, url] of [
  ['HTTP (undici Pool.dispatch)', `http://127.0.0.1:${PORT}`],
  ['ws:// (WsUpstream)', `ws://127.0.0.1:${PORT}`],
] as const) {
  const tag = client.startsWith('HTTP') ? 'http' : 'ws';
  const { perCall } = await measureClient(tag, url, opt.rounds, false);
  let top: Row['top'] = [];
  if (opt.top > 0) {
    const named = await measureClient(`${tag}-named`, url, 1, true);
    top = topFunctions(named.dump, named.perfMap, opt.top, opt.calls);
    spawnSync('rm', ['-f', named.perfMap]);
  }
  const m = median(perCall);
  rows.push({ client, url, perCall, median: m, spread: (Math.max(...perCall) - Math.min(...perCall)) / m, top });
}
stub.kill();

const lines: string[] = [];
const say = (s: string) => {
  lines.push(s);
  process.stdout.write(s + '\n');
};
const http = rows[0]!;
say(
  `\n## The forward's client alone (callgrind; ${opt.rounds} rounds of ${opt.calls} calls after ${opt.warmup} uninstrumented and one instrumented round left out; ${opt.concurrency} in flight; the stub on core ${STUB_CORE}, uninstrumented)\n`,
);
say('| client | instructions per call (median) | rounds | spread | / HTTP |');
say('|---|---|---|---|---|');
for (const r of rows)
  say(
    `| ${r.client} | ${round(r.median / 1000, 2)}k | ${r.perCall.map((x) => `${round(x / 1000, 1)}k`).join(' ')} | ${round(r.spread * 100, 1)}% | ${round(r.median / http.median, 3)}x |`,
  );
for (const r of rows) {
  if (r.top.length === 0) continue;
  say(`\n### ${r.client}: self instructions per call, by function (one round, in a client run with --perf-basic-prof)\n`);
  say('| function | instr / call |');
  say('|---|---|');
  for (const t of r.top) say(`| \`${t.fn.replace(/\|/g, '\\|')}\` | ${t.perCall} |`);
}
run.write('forward-cost.md', lines.join('\n') + '\n');
run.write('forward-cost.json', JSON.stringify({ node: process.version, date: new Date().toISOString(), ...opt, rows }, null, 2) + '\n');
process.exit(0);
