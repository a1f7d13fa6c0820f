/**
 * The callgrind benches' servers under valgrind's callgrind: started with instrumentation off
 * (switched on after the warm-up), a round between `callgrind_control -z` and `-d` (its dump read
 * by bench/profile/rounds.ts), and node's --trace-gc-nvp lines kept.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { startTxgate, type TxgateSpec } from '../common/txgate.js';

export interface Server {
  readonly name: string;
  readonly child: ChildProcess;
  readonly port: number;
  /** --trace-gc-nvp lines seen so far. */
  readonly gc: string[];
  stop(): Promise<void>;
}

// Instrumentation off until the measured rounds (callgrind_control --instr=on after the
// warm-up): node's start and the warm-up run several times faster uninstrumented.
const VALGRIND = ['--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', '--dump-instr=no', '--collect-jumps=no'];
const NODE = ['--single-threaded', '--trace-gc-nvp'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How a server is started: a bench server's script and arguments (ready when it prints `ready`), or txgate from a config. */
export type ServerDef = { readonly port: number; readonly args: readonly string[] } | { readonly port: number; readonly txgate: TxgateSpec };

/** Ends the process (exit 1, one line naming `bench`) unless valgrind's callgrind and its tools are installed. */
export function needCallgrind(bench: string): void {
  for (const tool of ['valgrind', 'callgrind_control', 'callgrind_annotate'])
    if (spawnSync('which', [tool]).status !== 0) {
      process.stderr.write(`${bench}: ${tool} is not installed: it needs valgrind's callgrind (Debian: apt-get install -y valgrind)\n`);
      process.exit(1);
    }
}

export class Callgrind {
  /** @param dir where the dumps are written (bench/profile/rounds.ts reads and removes them) */
  constructor(
    private readonly dir: string,
    private readonly children: ChildProcess[],
    /** node flags added for every server under callgrind (the profiler's fixed seeds and heap). */
    private readonly nodeFlags: readonly string[] = [],
  ) {}

  /**
   * Starts a server: under callgrind, or (`plain`) as node alone with a 1-MB young generation, so
   * that scavenges come often enough to count the bytes allocated per request precisely.
   */
  async start(name: string, def: ServerDef, plain = false): Promise<Server> {
    const nodeArgs = plain ? ['--single-threaded', '--max-semi-space-size=1', '--trace-gc-nvp'] : [...NODE, ...this.nodeFlags];
    const prefix = plain ? [] : ['valgrind', ...VALGRIND, `--callgrind-out-file=${join(this.dir, `cg.${name}.%p`)}`];
    const gc: string[] = [];
    let out = '';
    const keepGc = (child: ChildProcess) => {
      let rest = '';
      child.stdout!.on('data', (d: Buffer) => {
        const lines = (rest + d.toString()).split('\n');
        rest = lines.pop()!;
        for (const l of lines) {
          if (l.includes(' gc=')) gc.push(l);
          else if (out.length < 20_000) out += l + '\n';
        }
      });
    };
    if ('txgate' in def) {
      // node under callgrind starts in tens of seconds
      const t = await startTxgate({ ...def.txgate, prefix, nodeArgs, log: 'pipe', readyMs: 900_000, children: this.children });
      keepGc(t.proc);
      return { name, child: t.proc, port: def.port, gc, stop: () => t.stop(20_000) };
    }
    const cmd = [...prefix, 'node', ...nodeArgs, ...def.args];
    const child = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.children.push(child);
    keepGc(child);
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    const deadline = Date.now() + 900_000;
    while (!out.includes('ready')) {
      if (child.exitCode !== null) throw new Error(`${name} exited under valgrind: ${err}`);
      if (Date.now() > deadline) throw new Error(`${name} did not start under valgrind: ${err}`);
      await sleep(500);
    }
    const stop = async () => {
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([done, sleep(20_000)]);
      child.kill('SIGKILL');
    };
    return { name, child, port: def.port, gc, stop };
  }

  control(flag: '-z' | '-d' | '--instr=on', pid: number): void {
    const r = spawnSync('callgrind_control', [flag, String(pid)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`callgrind_control ${flag} ${pid}: ${r.stderr}`);
  }
}

/**
 * The GC lines of a round: bytes allocated, scavenges and full collections. The bytes are the
 * heap's growth between collections (this line's total_size_before less the previous line's
 * total_size_after); the lines' own `allocated=` counts from the last full collection.
 */
export function gcOf(lines: readonly string[], before?: string): { allocated: number; scavenges: number; majors: number } {
  let allocated = 0;
  let scavenges = 0;
  let majors = 0;
  const size = (l: string | undefined, field: string) => (l === undefined ? undefined : Number(new RegExp(` ${field}=(\\d+)`).exec(l)?.[1]));
  let after = size(before, 'total_size_after');
  for (const l of lines) {
    const b = size(l, 'total_size_before');
    if (after !== undefined && b !== undefined) allocated += b - after;
    after = size(l, 'total_size_after');
    const kind = / gc=(\w+)/.exec(l)?.[1];
    if (kind === 's') scavenges++;
    else if (kind !== undefined) majors++;
  }
  return { allocated, scavenges, majors };
}
