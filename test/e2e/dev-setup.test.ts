/**
 * `npm start`'s development directory: an existing accounts file is kept (accounts added with
 * the CLI survive a restart), and a second development txgate on the same directory is refused
 * while the first runs.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { lockDevDir, writeDevFiles } from '../../src/dev/dev-setup.js';
import { tempDir } from '../support/temp-dir.js';

const opts = { port: 8080, internalPort: 9464, sequencer: 'http://127.0.0.1:8545' };

describe('npm start: the development directory', () => {
  it('writes the accounts file once, then keeps it; the config follows the flags', () => {
    const dir = tempDir('txgate-dev-');
    const first = writeDevFiles(dir, opts);
    assert.equal(first.accountsCreated, true);
    const edited = JSON.parse(readFileSync(first.accountsFile, 'utf8'));
    edited.accounts.push({ id: 'added-with-the-cli', keySha256: ['ab'.repeat(32)], grants: [] });
    writeFileSync(first.accountsFile, JSON.stringify(edited));
    const second = writeDevFiles(dir, { ...opts, port: 8081 });
    assert.equal(second.accountsCreated, false);
    assert.ok(readFileSync(second.accountsFile, 'utf8').includes('added-with-the-cli'), 'not overwritten');
    assert.equal(JSON.parse(readFileSync(second.configFile, 'utf8')).listen.port, 8081);
  });
  it('--conditional: the chain served by the development sequencer, anvil its chain RPC, the method on; the dev grant may use it', () => {
    const dir = tempDir('txgate-dev-');
    const f = writeDevFiles(dir, { ...opts, sequencer: 'http://127.0.0.1:8550', rpc: 'http://127.0.0.1:8545', conditional: true });
    const chain = JSON.parse(readFileSync(f.configFile, 'utf8')).chains[0];
    assert.deepEqual([chain.sequencers, chain.rpc, chain.conditional], [['http://127.0.0.1:8550'], 'http://127.0.0.1:8545', { enabled: true }]);
    assert.equal(JSON.parse(readFileSync(f.accountsFile, 'utf8')).accounts[0].grants[0].conditional, true);
    const plain = JSON.parse(readFileSync(writeDevFiles(tempDir('txgate-dev-'), opts).configFile, 'utf8')).chains[0];
    assert.equal(plain.conditional, undefined, 'off unless asked');
  });
  it('--conditional with --flashblocks, or --sequencer-port alone: refused with one line, exit 2, before anything starts', () => {
    const dev = join(import.meta.dirname, '..', '..', 'scripts', 'dev.js');
    for (const [args, want] of [
      [['--conditional', '--flashblocks'], /--conditional and --flashblocks each put a development sequencer in front of anvil: give one/],
      [['--sequencer-port', '9000'], /--sequencer-port is the development sequencer of --conditional/],
      [['--conditional', '--sequencer-port', '8080'], /--sequencer-port must differ/],
    ] as const) {
      const r = spawnSync(process.execPath, [dev, '--dir', tempDir('txgate-dev-'), ...args], { encoding: 'utf8', timeout: 20_000 });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, want);
    }
  });
  it('the config is rewritten while it is what npm start wrote; once edited it is kept as it is, until deleted', () => {
    const dir = tempDir('txgate-dev-');
    const first = writeDevFiles(dir, opts);
    assert.equal(first.configWritten, true);
    const ext = writeDevFiles(dir, { ...opts, sync: true, websocket: true });
    assert.equal(ext.configWritten, true);
    const cfg = JSON.parse(readFileSync(ext.configFile, 'utf8'));
    assert.deepEqual(cfg.chains[0].sync, { enabled: true, syncTimeoutFormat: 'omit' });
    assert.equal(cfg.chains[0].rpc, opts.sequencer);
    assert.equal(cfg.websocket.enabled, true);
    cfg.log = { level: 'debug' };
    writeFileSync(ext.configFile, JSON.stringify(cfg));
    const kept = writeDevFiles(dir, { ...opts, port: 8082 });
    assert.equal(kept.configWritten, false);
    assert.deepEqual(JSON.parse(readFileSync(kept.configFile, 'utf8')), cfg, 'the edited config is untouched');
    rmSync(kept.configFile);
    const again = writeDevFiles(dir, { ...opts, port: 8082 });
    assert.equal(again.configWritten, true);
    assert.equal(JSON.parse(readFileSync(again.configFile, 'utf8')).listen.port, 8082);
  });
  it('a second claim on a directory in use is refused, naming the owner; a stale lock is taken over', async () => {
    const dir = tempDir('txgate-dev-');
    // A live owner: another process.
    const owner = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    writeFileSync(join(dir, 'lock'), String(owner.pid));
    try {
      assert.throws(() => lockDevDir(dir), new RegExp(`in use by another development txgate \\(pid ${owner.pid}\\)`));
    } finally {
      owner.kill('SIGKILL');
      await new Promise((r) => owner.once('exit', r));
    }
    // The owner is gone: its lock is stale.
    const release = lockDevDir(dir);
    assert.equal(readFileSync(join(dir, 'lock'), 'utf8'), String(process.pid));
    release();
    assert.equal(existsSync(join(dir, 'lock')), false);
  });
});
