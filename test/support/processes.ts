/** Helpers for tests that run txgate as its own process (the real CLI) and need free ports. */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { capturedLogs, eventually } from './harness.js';

/**
 * Every txgate process started by startCli or runCli that has not exited (test/support/gate-fixture.ts
 * ends them before it reads their output), and everything each one wrote, stdout and stderr whole
 * (a key split across two chunks is still found), read when the file's key check runs.
 */
export const liveProcesses = new Set<ChildProcess>();
export const processOutputs: (() => string)[] = [];

/**
 * Writes `dir/txgate.json` for the CLI: the public port ephemeral on 127.0.0.1, the internal
 * listener off, and `config` over those. Returns its path.
 */
export function writeCliConfig(dir: string, config: Record<string, unknown>): string {
  const file = join(dir, 'txgate.json');
  writeFileSync(file, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, internal: { enabled: false }, ...config }));
  return file;
}

export interface CliProcess {
  readonly proc: ChildProcess;
  readonly port: number;
  readonly internalPort: number | null;
  /** Everything it wrote (stdout and stderr) so far. */
  out(): string;
}

/** Starts `txgate --config FILE` (node args before the script, e.g. a preload); resolves once it logged its start-up line. */
export async function startCli(configFile: string, nodeArgs: string[] = []): Promise<CliProcess> {
  const proc = spawn(process.execPath, [...nodeArgs, join(import.meta.dirname, '../../src/cli.js'), '--config', configFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    capturedLogs.push(...d.toString().split('\n').filter(Boolean));
  });
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  liveProcesses.add(proc);
  processOutputs.push(() => out);
  proc.once('exit', () => liveProcesses.delete(proc));
  const line = await eventually(() => out.split('\n').find((l) => l.includes('txgate listening')), 20_000);
  const info = JSON.parse(line as string) as { port: number; internalPort: number | null };
  return { proc, port: info.port, internalPort: info.internalPort, out: () => out };
}

/** Runs `txgate --config FILE` to its end (killed after `ms`): its exit code and what it wrote. */
export function runCli(configFile: string, ms = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [join(import.meta.dirname, '../../src/cli.js'), '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    liveProcesses.add(p);
    processOutputs.push(() => `${stdout}\n${stderr}`);
    const t = setTimeout(() => p.kill('SIGKILL'), ms);
    p.on('exit', (code) => {
      clearTimeout(t);
      liveProcesses.delete(p);
      resolve({ code, stdout, stderr });
    });
  });
}
