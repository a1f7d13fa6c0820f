/**
 * One way for a bench to start txgate: a config in, a running process, its port and a stop out.
 * The config, its accounts and any file it names go into a temporary directory of its own, which
 * is removed when the txgate is stopped, and (with the process killed) when the bench exits,
 * however it exits: a bench's SIGINT handler ends in process.exit, which runs the exit hook.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TXGATE_CLI } from './paths.js';

export interface TxgateSpec {
  /**
   * txgate.json, or a function of the directory it is written in (for paths into it). Its
   * `accounts.file`, when `accounts` is given, is set to the accounts written beside it.
   * `listen.port` 0: the port txgate reports in its log.
   */
  readonly config: Record<string, unknown> | ((dir: string) => Record<string, unknown>);
  /** accounts.json's content. */
  readonly accounts?: unknown;
  /** Other files the config names (a key file): name in the directory → content, mode 0600. */
  readonly files?: Readonly<Record<string, string>>;
  /** A build's cli.js (default this build's). */
  readonly cli?: string;
  /** What runs node: `taskset -c 0`, `valgrind --tool=callgrind …` (default nothing). */
  readonly prefix?: readonly string[];
  /** node's own flags (--single-threaded, --require a preload). */
  readonly nodeArgs?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** txgate's stdout (its log): 'pipe' (read proc.stdout), 'ignore', or a file path; default a file in the directory. */
  readonly log?: 'pipe' | 'ignore' | string;
  /** txgate's stderr (default: piped and kept, for the error when it does not start). */
  readonly stderr?: 'pipe' | 'inherit' | 'ignore';
  /** Ready when GET /ready answers 200 ('http', default) or when the port takes a connection ('tcp': TLS). */
  readonly ready?: 'http' | 'tcp';
  /** How long it may take to be ready (default 30 s; node under callgrind takes tens of seconds). */
  readonly readyMs?: number;
  /** The directory the temporary one is made in (default the system's). */
  readonly parent?: string;
  /** A child list the bench kills on exit (startBench's): txgate is added. */
  readonly children?: ChildProcess[];
}

export interface RunningTxgate {
  readonly proc: ChildProcess;
  readonly port: number;
  /** http://127.0.0.1:PORT/ */
  readonly url: string;
  /** Its temporary directory (the config as txgate.json, accounts.json, the log as txgate.log). */
  readonly dir: string;
  /** SIGTERM, then SIGKILL after `graceMs` (default 5 s); the directory removed. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<{ proc: ChildProcess; dir: string }>();
process.on('exit', () => {
  for (const r of running) {
    if (r.proc.exitCode === null && r.proc.signalCode === null) r.proc.kill('SIGKILL');
    rmSync(r.dir, { recursive: true, force: true });
  }
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startTxgate(spec: TxgateSpec): Promise<RunningTxgate> {
  const dir = mkdtempSync(join(spec.parent ?? tmpdir(), 'txgate-'));
  for (const [name, text] of Object.entries(spec.files ?? {})) writeFileSync(join(dir, name), text, { mode: 0o600 });
  const config = typeof spec.config === 'function' ? spec.config(dir) : { ...spec.config };
  if (spec.accounts !== undefined) {
    writeFileSync(join(dir, 'accounts.json'), JSON.stringify(spec.accounts));
    config.accounts = { ...(config.accounts as object | undefined), file: join(dir, 'accounts.json') };
  }
  const configPath = join(dir, 'txgate.json');
  writeFileSync(configPath, JSON.stringify(config));

  const logPath = spec.log === undefined ? join(dir, 'txgate.log') : spec.log === 'pipe' || spec.log === 'ignore' ? undefined : spec.log;
  const stdout = logPath !== undefined ? openSync(logPath, 'w') : spec.log === 'ignore' ? 'ignore' : 'pipe';
  const argv = [...(spec.prefix ?? []), process.execPath, ...(spec.nodeArgs ?? []), spec.cli ?? TXGATE_CLI, '--config', configPath];
  const stdio: StdioOptions = ['ignore', stdout, spec.stderr ?? 'pipe'];
  const proc = spawn(argv[0]!, argv.slice(1), { stdio, ...(spec.env !== undefined ? { env: spec.env } : {}) });
  const entry = { proc, dir };
  running.add(entry);
  spec.children?.push(proc);
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-16_000)));
  let logged = '';
  if (stdout === 'pipe') proc.stdout!.on('data', (d: Buffer) => logged.length < 20_000 && (logged += d.toString()));

  const stop = async (graceMs = 5_000) => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const gone = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await Promise.race([gone, sleep(graceMs)]);
      proc.kill('SIGKILL');
    }
    running.delete(entry);
    rmSync(dir, { recursive: true, force: true });
  };

  const listen = (config.listen ?? {}) as { port?: number };
  const deadline = Date.now() + (spec.readyMs ?? 30_000);
  const fail = async (why: string): Promise<never> => {
    await stop(0);
    // Its own lines, not a wrapper's (valgrind's are `==PID==` lines).
    const own = err.split('\n').filter((l) => l.trim() !== '' && !/^==\d+==/.test(l));
    throw new Error(`txgate ${why}: ${own.slice(-3).join(' ') || logged.slice(-500)}`);
  };
  let port = listen.port ?? 0;
  while (port === 0) {
    // Its first log line names the port it listens on.
    const text = logPath !== undefined ? readFileSync(logPath, 'utf8') : logged;
    port = Number(/"port":(\d+)/.exec(text)?.[1] ?? 0);
    if (proc.exitCode !== null) await fail(`exited (${proc.exitCode})`);
    if (Date.now() > deadline) await fail('did not say its port');
    if (port === 0) await sleep(20);
  }
  while (!(await (spec.ready === 'tcp' ? takes(port) : readyAt(port)))) {
    if (proc.exitCode !== null) await fail(`exited (${proc.exitCode})`);
    if (Date.now() > deadline) await fail('was not ready');
    await sleep(50);
  }
  return { proc, port, url: `http://127.0.0.1:${port}/`, dir, stop };
}

async function readyAt(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/ready`, { signal: AbortSignal.timeout(5_000) })).status === 200;
  } catch {
    return false;
  }
}

function takes(port: number): Promise<boolean> {
  return new Promise((r) => {
    const s = connect(port, '127.0.0.1', () => {
      s.destroy();
      r(true);
    }).once('error', () => r(false));
  });
}
