/**
 * The README's first signed transaction, run as written beside `npm start` (the development
 * setup on other ports: the block's 8080 and 8545 replaced): `cast mktx` signs with the funded
 * test key, curl submits with the development key and gets 200 with the hash of those bytes, and
 * the chain RPC has its receipt. The README's own key, tip address and value are the ones
 * `npm start` prints.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ANVIL_KEYS, ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { DEV_API_KEY, DEV_MIN_TIP_WEI } from '../../src/dev/dev-setup.js';
import { portFree } from '../../src/dev/preflight.js';
import { initCrypto } from '../../src/base/native.js';
import { block } from '../../scripts/readme-tables.js';
import { capturedLogs, eventually } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { txHash } from '../support/stub-sequencer.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { devArgs } from '../support/dev-args.js';

keysNeverLogged({ except: [DEV_API_KEY] });

const root = join(import.meta.dirname, '..', '..', '..');
const README = readFileSync(join(root, 'README.md'), 'utf8');

/** The shell lines of the README's first-tx block (its fence and comment lines left out). */
function firstTxScript(): string {
  const text = block(README, 'first-tx');
  const m = /^```sh\n([\s\S]*?)\n```$/.exec(text.trim());
  assert.ok(m !== null, 'the block is one sh fence');
  return m[1]!;
}

describe("the README's first signed transaction", () => {
  it("names npm start's funded key, tip address, minimum tip and development key", () => {
    const script = firstTxScript();
    assert.ok(script.includes(ANVIL_KEYS[0]!), 'the funded test key');
    assert.ok(script.includes(ANVIL_TIP_ADDRESS), 'the tip address');
    assert.ok(script.includes(`--value ${DEV_MIN_TIP_WEI}`), 'the minimum tip');
    assert.ok(script.includes(DEV_API_KEY), 'the development key');
    assert.ok(script.includes('localhost:8080') && script.includes('127.0.0.1:8545'), "npm start's ports");
  });

  it('run as written beside npm start: 200 with the hash of the signed bytes, and the receipt', async () => {
    await initCrypto();
    const dir = tempDir('txgate-first-tx-');
    const [port, anvil, internal] = [await freePort(), await freePort(), await freePort()];
    const p = spawn(process.execPath, devArgs(dir, { port, anvil, internal }, '--json'), { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      capturedLogs.push(d.toString());
    });
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await eventually(() => out.includes('is up'), 60_000);
      // The block as written, on this run's ports, printing $RAW at the end for the check.
      const script = firstTxScript().replaceAll('8080', String(port)).replaceAll('8545', String(anvil)) + '\necho "RAW=$RAW"\n';
      const file = join(dir, 'first-tx.sh');
      writeFileSync(file, script);
      const r = await promisify(execFile)('bash', ['-e', file], { cwd: root, encoding: 'utf8', timeout: 120_000 });
      const raw = /^RAW=(0x[0-9a-f]+)$/m.exec(r.stdout)?.[1];
      assert.ok(raw !== undefined, r.stdout + r.stderr);
      const answer = r.stdout.split('\n').find((l) => l.startsWith('{'));
      assert.deepEqual(JSON.parse(answer!), { jsonrpc: '2.0', id: 1, result: txHash(raw) });
      assert.match(r.stdout, /^HTTP 200$/m);
      assert.match(r.stdout, /^(true|1|0x1)( \(success\))?$/m, 'the receipt says executed');
    } finally {
      p.kill('SIGTERM');
      await new Promise((r) => p.once('exit', r));
      await eventually(async () => (await portFree('127.0.0.1', anvil)) && (await portFree('127.0.0.1', port)), 10_000);
    }
  });
});
