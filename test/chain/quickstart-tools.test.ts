/**
 * The quick-start tools as a user runs them through npm: `npm run accounts` resolves a relative
 * --file from the directory the user ran it in and prints the absolute path it wrote;
 * `npm start -- --sync --websocket` turns both extensions on for the development chain, its
 * banner says how to call them, and those calls (npm run demo) execute.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { portFree } from '../../src/dev/preflight.js';
import { capturedLogs, eventually, issuedKeys } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';
import { devArgs } from '../support/dev-args.js';

keysNeverLogged();

const root = join(import.meta.dirname, '..', '..', '..');

async function npm(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await promisify(execFile)('npm', args, { cwd, encoding: 'utf8', timeout: 120_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

describe('npm run accounts', () => {
  it('a relative --file is from the directory the user ran npm in; the absolute path is printed', async () => {
    const dir = tempDir('txgate-cwd-');
    const r = await npm(
      [
        '--prefix',
        root,
        'run',
        '--silent',
        'accounts',
        '--',
        'create',
        '--id',
        'acme',
        '--chain',
        String(DEV_CHAIN_ID),
        '--rate',
        '10',
        '--burst',
        '20',
        '--tip',
        '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720',
        '--min-tip',
        '1',
        '--file',
        'mine.json',
      ],
      dir,
    );
    assert.equal(r.code, 0, r.stderr);
    const key = /(txg_[A-Za-z0-9_-]{43})/.exec(r.stdout)?.[1];
    if (key !== undefined) issuedKeys.push(key);
    assert.match(r.stdout, new RegExp(`created account "acme" in ${join(dir, 'mine.json').replaceAll('.', '\\.')}\\n`));
    assert.ok(existsSync(join(dir, 'mine.json')), 'written where the user was');
    assert.ok(!existsSync(join(root, 'mine.json')), 'not in the repository');
    assert.equal(JSON.parse(readFileSync(join(dir, 'mine.json'), 'utf8')).accounts[0].id, 'acme');
  });
});

describe('npm start -- --sync --websocket', () => {
  it('turns both on for the development chain; the banner says how to call them, and those calls execute', async () => {
    const dir = tempDir('txgate-dev-');
    const [port, anvil, internal] = [await freePort(), await freePort(), await freePort()];
    const p = spawn(process.execPath, devArgs(dir, { port, anvil, internal }, '--sync', '--websocket', '--json'), {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      capturedLogs.push(d.toString());
    });
    // Both streams are what the file's key check reads (test/support/gate-fixture.ts): a key on stderr is a leak too.
    p.stderr.on('data', (d: Buffer) => {
      out += d.toString();
      capturedLogs.push(d.toString());
    });
    try {
      await eventually(() => out.includes('is up'), 60_000);
      const sync = /try: npm run demo -- (--sync [^\n]*)/.exec(out)?.[1];
      const ws = /WebSocket transport +ws:\/\/127\.0\.0\.1:\d+\/[^\n]*\n +try: npm run demo -- ([^\n]*)/.exec(out)?.[1];
      assert.ok(sync !== undefined && ws !== undefined, out);
      for (const args of [sync, ws]) {
        const r = await promisify(execFile)(process.execPath, ['dist/scripts/demo.js', ...args.trim().split(/\s+/)], { cwd: root, encoding: 'utf8' });
        assert.match(r.stdout, /status 0x1/, args);
      }
    } finally {
      p.kill('SIGTERM');
      await new Promise((r) => p.once('exit', r));
      await eventually(async () => (await portFree('127.0.0.1', anvil)) && (await portFree('127.0.0.1', port)), 10_000);
    }
  });
});

describe('npm start with an invalid accounts file', () => {
  it('one line naming the file and the problem, exit 1, its anvil stopped', async () => {
    const dir = tempDir('txgate-dev-');
    writeFileSync(join(dir, 'accounts.json'), '{ "accounts": 5 }');
    const [port, anvil, internal] = [await freePort(), await freePort(), await freePort()];
    const r = await promisify(execFile)(process.execPath, devArgs(dir, { port, anvil, internal }), { cwd: root, encoding: 'utf8' }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code?: number; stderr?: string }) => ({ code: e.code ?? 1, stderr: e.stderr ?? '' }),
    );
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      `npm start: accounts file ${join(dir, 'accounts.json')}: accounts: must be an array (file: {"accounts":[…]}); fix the file or accounts.file in ${join(dir, 'txgate.json')}`,
    );
    assert.ok(await portFree('127.0.0.1', anvil), 'its anvil was stopped');
  });
});
