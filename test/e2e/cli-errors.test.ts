/**
 * Every CLI of the project refuses bad input in the same shape (docs/operations.md "Exit status"):
 * `NAME: message` naming the option, in our words (never node:util's parser wording), exit 2; an
 * invalid configuration is every problem on its own line, exit 2, under `txgate` and `npm start`
 * alike. Every form of a refused command line is tested once, on the reader they share
 * (test/unit/cli-args.test.ts); here each CLI with one, as a user meets it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { portFree } from '../../src/dev/preflight.js';
import { freePort } from '../../src/base/free-port.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';
import { tempDir } from '../support/temp-dir.js';

const root = join(import.meta.dirname, '..', '..', '..');
const tmp = tempDir('txgate-cli-errors-');

const env = { ...process.env };
delete env.TXGATE_ACCOUNTS_DB;

function run(script: string, args: string[]) {
  const r = spawnSync(process.execPath, [join(root, 'dist', script), ...args], { encoding: 'utf8', timeout: 30_000, env, cwd: tmp });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Node's parser wording: "Unknown option '--x'. To specify a positional argument starting with a '-', …". */
const NODE_WORDING = /Unknown option '|To specify a positional|as in '|ERR_PARSE_ARGS|argument is ambiguous/;

const CLIS: [name: string, script: string, prefix: string][] = [
  ['txgate', 'src/cli.js', 'txgate'],
  ['npm start', 'scripts/dev.js', 'npm start'],
  ['npm run demo', 'scripts/demo.js', 'demo'],
  ['npm run accounts', 'scripts/accounts.js', 'accounts'],
  ['npm run bench:fleet', 'bench/entry/fleet.js', 'bench:fleet'],
];

describe('every CLI: a bad option is one plain line naming it, exit 2', () => {
  for (const [name, script, prefix] of CLIS) {
    it(`${name} --bogus-option`, () => {
      const r = run(script, ['--bogus-option']);
      assert.equal(r.code, 2, r.stderr);
      const first = r.stderr.split('\n')[0]!;
      assert.match(first, new RegExp(`^${prefix}: unknown option --bogus-option( |$)`), r.stderr);
      assert.doesNotMatch(r.stderr, NODE_WORDING);
    });
  }
  it('npm run demo --url with no value, and a stray argument', () => {
    const r = run('scripts/demo.js', ['--url']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^demo: --url needs a value/);
    const stray = run('scripts/demo.js', ['now']);
    assert.equal(stray.code, 2);
    assert.match(stray.stderr, /^demo: unexpected argument "now"/);
  });
});

describe('an invalid configuration: every problem on its own line, exit 2, txgate and npm start alike', () => {
  const bad = {
    listen: { port: 'eighty' },
    chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: ['http://127.0.0.1:1'], bogusKey: 1 }],
  };

  it('txgate --config', () => {
    const file = join(tmp, 'bad.json');
    writeFileSync(file, JSON.stringify(bad));
    const r = run('src/cli.js', ['--config', file]);
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines[0], 'txgate: invalid configuration:');
    assert.ok(lines.slice(1).length >= 2 && lines.slice(1).every((l) => l.startsWith('  - ')), r.stderr);
    assert.ok(lines.some((l) => l.includes('chains[0].bogusKey')) && lines.some((l) => l.includes('listen.port')), r.stderr);
  });

  it('npm start with an edited config: the same lines as txgate gives for the file, exit 2, before anvil is started', async () => {
    const dir = mkdtempSync(join(tmp, 'dev-'));
    const file = join(dir, 'txgate.json');
    writeFileSync(file, JSON.stringify({ ...bad, accounts: { file: './accounts.json' } }, null, 2));
    // Not what npm start wrote last: the config is the user's, used as it is.
    writeFileSync(join(dir, '.generated'), '0'.repeat(64) + '\n');
    const [port, anvil, internal] = [await freePort(), await freePort(), await freePort()];
    const p = spawn(
      process.execPath,
      ['dist/scripts/dev.js', '--dir', dir, '--port', String(port), '--anvil-port', String(anvil), '--internal-port', String(internal)],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((r) => p.once('exit', r));
    assert.equal(code, 2, stderr);
    const lines = stderr.trim().split('\n');
    assert.equal(lines[0], `npm start: ${file}: invalid configuration:`);
    const txgate = run('src/cli.js', ['--config', file]).stderr.trim().split('\n');
    assert.deepEqual(lines.slice(1), txgate.slice(1), 'the same problems, one a line');
    assert.ok(await portFree('127.0.0.1', anvil), 'no anvil left running');
  });
});
