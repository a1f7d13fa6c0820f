/**
 * One txgate per address: a second txgate started on the address another one serves (whatever
 * the thread count of either) exits 1 with one line naming the address and listen.port, and
 * the first keeps serving every connection.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { claimAddress } from '../../src/http/address-claim.js';
import { eventually } from '../support/harness.js';
import { send } from '../support/http.js';
import { freePort } from '../../src/base/free-port.js';
import { runCli, startCli } from '../support/processes.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';
import { devArgs } from '../support/dev-args.js';

keysNeverLogged();

const cli = join(import.meta.dirname, '../../src/cli.js');

function configFile(port: number, workers: number): string {
  const dir = tempDir('txgate-one-');
  writeFileSync(join(dir, 'accounts.json'), JSON.stringify({ accounts: [] }));
  const file = join(dir, 'txgate.json');
  const chains = [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }];
  writeFileSync(
    file,
    JSON.stringify({ listen: { host: '127.0.0.1', port }, internal: { enabled: false }, workers, chains, accounts: { file: join(dir, 'accounts.json') } }),
  );
  return file;
}

/** GET /health answered 200. */
async function healthOk(port: number): Promise<boolean> {
  const r = await send({ port, method: 'GET', path: '/health' });
  return r.status === 200;
}

describe('one txgate per address', () => {
  for (const [first, second] of [
    [2, 2],
    [2, 1],
    [1, 2],
  ] as const) {
    it(`a second txgate (${second} thread${second > 1 ? 's' : ''}) on the address a txgate with ${first} serves: one line naming the address and listen.port, exit 1; the first serves on`, async () => {
      const port = await freePort();
      const a = await startCli(configFile(port, first));
      try {
        const file = configFile(port, second);
        const r = await runCli(file);
        assert.equal(r.code, 1);
        const lines = r.stderr.trim().split('\n');
        assert.equal(lines.length, 1, r.stderr);
        assert.equal(
          lines[0],
          `txgate: cannot listen on 127.0.0.1:${port}: the port is in use: another txgate serves this address; change listen.port in ${file}`,
        );
        assert.doesNotMatch(r.stdout, /txgate listening/);
        // Every connection still reaches the first txgate (the second never listened).
        for (let i = 0; i < 8; i++) assert.ok(await healthOk(port));
        assert.equal(a.proc.exitCode, null, 'the first is still running');
      } finally {
        a.proc.kill('SIGTERM');
        await new Promise((r) => a.proc.once('exit', r));
      }
    });
  }

  it('two txgates started at the same moment on one config: exactly one serves, the other exits 1', async () => {
    const port = await freePort();
    const file = configFile(port, 2);
    const procs = [0, 1].map(() => spawn(process.execPath, [cli, '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] }));
    const outs = procs.map((p) => {
      const o = { text: '' };
      p.stdout.on('data', (d: Buffer) => (o.text += d.toString()));
      p.stderr.on('data', (d: Buffer) => (o.text += d.toString()));
      return o;
    });
    try {
      const loser = await new Promise<number>((resolve) => {
        for (const [i, p] of procs.entries()) p.once('exit', () => resolve(i));
      });
      assert.equal(procs[loser]!.exitCode, 1);
      assert.match(outs[loser]!.text, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`));
      const winner = procs[1 - loser]!;
      assert.equal(winner.exitCode, null, 'the other serves');
    } finally {
      for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
      await Promise.all(procs.map((p) => (p.exitCode === null && p.signalCode === null ? new Promise((r) => p.once('exit', r)) : null)));
    }
  });

  it('beside npm start: a txgate on its address exits 1 with the one line', async () => {
    const [port, anvil, internal] = [await freePort(), await freePort(), await freePort()];
    const dir = tempDir('txgate-dev-');
    const dev = spawn(process.execPath, devArgs(dir, { port, anvil, internal }, '--json'), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    dev.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await eventually(() => out.includes('is up'), 60_000);
      const file = configFile(port, 2);
      const r = await runCli(file);
      assert.equal(r.code, 1);
      assert.match(r.stderr.trim(), new RegExp(`^txgate: cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use[^\\n]*change listen\\.port in `));
    } finally {
      dev.kill('SIGTERM');
      await new Promise((r) => dev.once('exit', r));
    }
  });

  it('the claim is released with the process: a txgate started after the first exited serves', async () => {
    const port = await freePort();
    const file = configFile(port, 2);
    const a = await startCli(file);
    a.proc.kill('SIGTERM');
    await new Promise((r) => a.proc.once('exit', r));
    const b = await startCli(file);
    try {
      assert.ok(await healthOk(port));
    } finally {
      b.proc.kill('SIGTERM');
      await new Promise((r) => b.proc.once('exit', r));
    }
  });

  it('within one process, a second claim of an address is refused and a released one can be claimed again', async () => {
    const port = await freePort();
    const c = await claimAddress('127.0.0.1', port);
    await assert.rejects(claimAddress('127.0.0.1', port), /another txgate serves this address/);
    c.release();
    await new Promise((r) => setTimeout(r, 10));
    const again = await claimAddress('127.0.0.1', port);
    again.release();
  });
});
