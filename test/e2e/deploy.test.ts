/**
 * The supervised start lines in deploy/: the systemd unit's ExecStart and the container's
 * entrypoint script, run directly here (no systemd or container engine needed): each runs
 * txgate as the process the supervisor signals, so SIGTERM answers the requests in flight and
 * exits 0; the container's health check passes on a ready txgate and fails on none. The
 * Dockerfile is checked for what a supervisor relies on (official Node image, non-root user,
 * STOPSIGNAL SIGTERM, the health check, the entrypoint, sources that exist).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { initCrypto } from '../../src/base/native.js';
import { accountsDoc, capturedLogs, eventually, newKey } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { freePort } from '../../src/base/free-port.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const root = join(import.meta.dirname, '..', '..', '..');
const deploy = join(root, 'deploy');
const key = newKey();
let slow: StubSequencer;

before(async () => {
  await initCrypto();
  slow = await new StubSequencer().start();
  slow.delayMs = 700;
});
after(async () => {
  await slow.stop();
});

/** A configuration on a fixed free port (a health check reads the port from it), two threads. */
async function config(): Promise<{ file: string; port: number }> {
  const dir = tempDir('txgate-deploy-');
  writeFileSync(join(dir, 'accounts.json'), JSON.stringify(accountsDoc([{ id: 'mm', keys: [key] }])));
  const port = await freePort();
  const file = join(dir, 'txgate.json');
  writeFileSync(
    file,
    JSON.stringify({
      listen: { host: '127.0.0.1', port },
      internal: { enabled: false },
      workers: 2,
      chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [slow.url], probe: { intervalMs: 200 } }],
      accounts: { file: 'accounts.json' },
    }),
  );
  return { file, port };
}

function started(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): { proc: ChildProcess; out: () => string } {
  const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    capturedLogs.push(d.toString());
  });
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return { proc, out: () => out };
}

/** Requests in flight at the sequencer, then SIGTERM to the process: every one answered with its hash, exit 0. */
async function drainsOnSigterm(proc: ChildProcess, out: () => string, port: number, nonceBase: number): Promise<void> {
  const exited = new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
  await eventually(() => out().includes('txgate listening'), 20_000);
  await eventually(async () => (await rpc(port, 'eth_chainId', [])).status === 200);
  const before = slow.sends().length;
  const raws = await Promise.all(Array.from({ length: 6 }, (_, i) => sign1559({ nonce: nonceBase + i })));
  const inFlight = raws.map((raw) => rpc(port, 'eth_sendRawTransaction', [raw], { key }));
  await eventually(() => slow.sends().length - before === raws.length);
  proc.kill('SIGTERM');
  const answers = await Promise.all(inFlight);
  assert.deepEqual(
    answers.map((r) => r.json.result),
    raws.map((raw) => txHash(raw)),
  );
  assert.equal(await exited, 0, out());
  const msgs = out()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => (JSON.parse(l) as { msg: string }).msg);
  assert.ok(msgs.includes('draining'), out());
  assert.equal(msgs.at(-1), 'stopped');
}

describe('the systemd unit (deploy/txgate.service)', () => {
  const unit = readFileSync(join(deploy, 'txgate.service'), 'utf8');
  const setting = (name: string) => unit.match(new RegExp(`^${name}=(.*)$`, 'm'))?.[1];

  it('starts node on txgate itself (no npx or npm between systemd and txgate), stops with SIGTERM and waits past the drain', () => {
    const exec = setting('ExecStart')!.split(/\s+/);
    assert.equal(exec[0], '/usr/bin/node');
    // docs/performance.md#after-an-idle-spell
    assert.equal(exec[1], '--no-memory-reducer');
    assert.match(exec[2]!, /\/dist\/src\/cli\.js$/);
    assert.equal(setting('KillSignal'), 'SIGTERM');
    assert.ok(Number(setting('TimeoutStopSec')) > 10, 'longer than the default shutdown.graceMs (10 s)');
    assert.equal(setting('RestartPreventExitStatus'), '2', 'a bad configuration is not restarted in a loop');
    assert.match(setting('User')!, /^[a-z]/);
    assert.notEqual(setting('User'), 'root');
  });

  it('its ExecStart command line, run directly: serves, and SIGTERM drains what is in flight and exits 0', async () => {
    const { file, port } = await config();
    const exec = setting('ExecStart')!
      .replace('/usr/bin/node', process.execPath)
      .replace('/opt/txgate', root)
      .replace('/etc/txgate/txgate.json', file)
      .split(/\s+/);
    const { proc, out } = started(exec[0]!, exec.slice(1));
    try {
      await drainsOnSigterm(proc, out, port, 700);
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  });
});

describe('the container recipe (deploy/Dockerfile)', () => {
  const docker = readFileSync(join(deploy, 'Dockerfile'), 'utf8');
  const lines = docker.split('\n').filter((l) => /^[A-Z]/.test(l));

  it('an official Node image, a non-root user, STOPSIGNAL SIGTERM, a health check on /ready, the entrypoint; every file it copies exists', () => {
    const froms = lines.filter((l) => l.startsWith('FROM '));
    assert.ok(froms.length >= 1);
    for (const f of froms) assert.match(f, /^FROM node:20[\w.-]*( AS \w+)?$/);
    const user = lines.filter((l) => l.startsWith('USER ')).at(-1);
    assert.ok(user !== undefined && !/\broot\b|\b0\b/.test(user), 'the image runs as a non-root user');
    assert.ok(lines.includes('STOPSIGNAL SIGTERM'));
    assert.match(lines.find((l) => l.startsWith('HEALTHCHECK'))!, /deploy\/healthcheck\.mjs/);
    assert.match(lines.find((l) => l.startsWith('ENTRYPOINT'))!, /deploy\/entrypoint\.sh/);
    for (const l of lines.filter((x) => x.startsWith('COPY ') && !x.includes('--from'))) {
      const parts = l.split(/\s+/).slice(1, -1);
      for (const p of parts) assert.ok(existsSync(join(root, p)), `${p} (in "${l}") exists`);
    }
  });

  it('its entrypoint script, run directly, becomes txgate (exec): the health check passes once ready; SIGTERM drains and exits 0', async () => {
    const { file, port } = await config();
    const env = { ...process.env, TXGATE_CONFIG: file };
    const { proc, out } = started(join(deploy, 'entrypoint.sh'), [], env);
    try {
      await eventually(() => out().includes('txgate listening'), 20_000);
      // exec: the process started is txgate itself, so a stop signal reaches it.
      assert.match(readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8'), /dist\/src\/cli\.js\0--config\0/);
      const check = () =>
        new Promise<{ code: number | null; text: string }>((resolve) => {
          const c = started(process.execPath, [join(deploy, 'healthcheck.mjs')], env);
          c.proc.once('exit', (code) => resolve({ code, text: c.out() }));
        });
      await eventually(async () => (await check()).code === 0, 10_000);
      await drainsOnSigterm(proc, out, port, 720);
      const down = await check();
      assert.equal(down.code, 1, 'nothing serves: the health check fails');
      assert.match(down.text, /GET \/ready failed/);
    } finally {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  });
});

describe('the README and docs/operations.md', () => {
  it('their production start line runs txgate under node without the memory reducer, not npx', () => {
    for (const page of ['README.md', 'docs/operations.md']) {
      const text = readFileSync(join(root, page), 'utf8');
      assert.doesNotMatch(text, /npx txgate/, page);
      assert.match(text, /node --no-memory-reducer dist\/src\/cli\.js --config/, page);
    }
  });
});
