/**
 * Start-up that fails loudly: `npm start` (scripts/dev.ts) and `txgate --config` end within
 * seconds with one line naming the problem and the option to change, exit 1, and leave nothing
 * running; SIGTERM to the npm process of `npm start` stops everything it started.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startAnvil } from '../../src/dev/anvil.js';
import { portFree } from '../../src/dev/preflight.js';
import { eventually } from '../support/harness.js';
import { send } from '../support/http.js';
import { freePort } from '../../src/base/free-port.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { oneLine } from '../support/one-line.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const root = join(import.meta.dirname, '..', '..', '..');

/** Runs a node script to its end: exit code and everything it wrote. */
function run(args: string[], ms = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => p.kill('SIGKILL'), ms);
    p.on('exit', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A TCP listener that accepts and never answers (a hung process holding a port). */
async function silentListener(port: number, host = '127.0.0.1'): Promise<Server> {
  const s = createServer(() => {});
  await new Promise<void>((r) => s.listen(port, host, () => r()));
  return s;
}

/** Three free ports, all different (a port freed by one probe can be handed out again by the next). */
async function ports() {
  for (;;) {
    const p = { port: await freePort(), anvil: await freePort(), internal: await freePort() };
    if (new Set([p.port, p.anvil, p.internal]).size === 3) return p;
  }
}
const devArgs = (dir: string, p: { port: number; anvil: number; internal: number }) => [
  'dist/scripts/dev.js',
  '--dir',
  dir,
  '--port',
  String(p.port),
  '--anvil-port',
  String(p.anvil),
  '--internal-port',
  String(p.internal),
];

describe('npm start fails loudly', () => {
  it('the anvil port held by something that accepts and never answers: one line naming --anvil-port, exit 1', async () => {
    const p = await ports();
    const listener = await silentListener(p.anvil);
    try {
      const r = await run(devArgs(tempDir('txgate-dev-'), p));
      assert.equal(r.code, 1);
      assert.match(oneLine(r.stderr), new RegExp(`127\\.0\\.0\\.1:${p.anvil} .*already in use.*--anvil-port`));
      assert.ok(await portFree('127.0.0.1', p.port), 'txgate never started');
    } finally {
      listener.close();
    }
  });
  it('the public port taken: one line naming --port, exit 1, no anvil left running', async () => {
    const p = await ports();
    const listener = await silentListener(p.port);
    try {
      const r = await run(devArgs(tempDir('txgate-dev-'), p));
      assert.equal(r.code, 1);
      assert.match(oneLine(r.stderr), /already in use.*--port$/);
      assert.ok(await portFree('127.0.0.1', p.anvil), 'no anvil left behind');
    } finally {
      listener.close();
    }
  });
  it('bad options: one line, exit 2 (bad input, docs/operations.md "Exit status"); --help works', async () => {
    for (const args of [
      ['--prot', '1'],
      ['--port', 'abc'],
      ['--port', '8080', '--anvil-port', '8080'],
    ]) {
      const r = await run(['dist/scripts/dev.js', ...args]);
      assert.equal(r.code, 2, args.join(' '));
      oneLine(r.stderr);
    }
    const help = await run(['dist/scripts/dev.js', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--anvil-port/);
  });
  it('startAnvil never reports up for an anvil of another chain already on the port', async () => {
    const port = await freePort();
    const other = await startAnvil({ port, chainId: 31337 });
    try {
      await assert.rejects(startAnvil({ port, chainId: 4663, readyWithinMs: 5_000 }), /anvil exited|answers chain 0x7a69, not 4663/);
    } finally {
      await other.stop();
    }
  });
  it('SIGTERM to the npm process of `npm start` stops txgate and its anvil; its output has no ANSI codes when redirected', async () => {
    const p = await ports();
    const dir = tempDir('txgate-dev-');
    // A process group of its own: whatever happens below, nothing it started outlives the test.
    const npm = spawn('npm', ['start', '--silent', '--', ...devArgs(dir, p).slice(1)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
    npm.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await eventually(() => out.includes('is up'), 60_000);
      assert.ok(!(await portFree('127.0.0.1', p.anvil)) && !(await portFree('127.0.0.1', p.port)), 'both running');
      npm.kill('SIGTERM');
      await eventually(async () => (await portFree('127.0.0.1', p.anvil)) && (await portFree('127.0.0.1', p.port)), 20_000);
      assert.ok(!out.includes('\u001b['), 'no ANSI escape codes in redirected output');
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        /* the group is gone: everything stopped */
      }
    }
  });
});

/** A CLI config (no accounts, a sequencer nobody answers on) in a directory of its own. */
function configFile(host: string, port: number, extra: Record<string, unknown>): string {
  const dir = tempDir('txgate-cli-');
  writeFileSync(join(dir, 'accounts.json'), JSON.stringify({ accounts: [] }));
  const file = join(dir, 'txgate.json');
  const chains = [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }];
  writeFileSync(
    file,
    JSON.stringify({ listen: { host, port }, internal: { enabled: false }, chains, accounts: { file: join(dir, 'accounts.json') }, ...extra }),
  );
  return file;
}

describe('txgate --config fails loudly', () => {
  it('a port in use: one line naming listen.port on stderr, exit 1 (one thread and two)', async () => {
    const port = await freePort();
    const listener = await silentListener(port, '0.0.0.0');
    try {
      for (const workers of [1, 2]) {
        const file = configFile('0.0.0.0', port, { workers });
        const r = await run(['dist/src/cli.js', '--config', file]);
        assert.equal(r.code, 1, `workers ${workers}`);
        assert.match(oneLine(r.stderr), new RegExp(`cannot listen on 0\\.0\\.0\\.0:${port}: the port is in use.*change listen\\.port in `));
      }
    } finally {
      listener.close();
    }
  });
});

describe('txgate --pretty', () => {
  it('with two worker threads, every thread writes readable lines (no JSON), without ANSI codes when not a terminal', async () => {
    const port = await freePort();
    const file = configFile('127.0.0.1', port, { workers: 2, log: { level: 'debug' } });
    const p = spawn(process.execPath, ['dist/src/cli.js', '--config', file, '--pretty'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await eventually(() => out.includes('txgate listening'), 20_000);
      // Requests answered by both worker threads (each on a connection of its own: the kernel
      // spreads connections, not requests, over the threads; 16 all landing on one thread is a
      // 1-in-32,768 chance): their request lines must be pretty too.
      for (let i = 0; i < 16; i++)
        await send({
          port,
          headers: { 'content-type': 'application/json', 'x-api-key': 'txg_nope' },
          body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: ['0x02'] }),
        });
      await eventually(() => (out.match(/refused/g) ?? []).length >= 16, 5_000);
      assert.match(out, /reqId: "w0\./, 'request lines from worker thread 0');
      assert.match(out, /reqId: "w1\./, 'request lines from worker thread 1');
      for (const line of out.split('\n')) assert.ok(!line.trimStart().startsWith('{"level"'), `a JSON line: ${line}`);
      assert.ok(!out.includes('\u001b['), 'no ANSI escape codes');
    } finally {
      p.kill('SIGTERM');
      await new Promise((r) => p.once('exit', r));
    }
  });
});
