/**
 * The command-line tools answer every bad option or value with one clear line and a non-zero
 * exit, never a stack trace; unknown commands say so; --help works for each.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { oneLine } from '../support/one-line.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';
import { tempDir } from '../support/temp-dir.js';

const root = join(import.meta.dirname, '..', '..', '..');
const tmp = tempDir('txgate-cli-usage-');
const file = join(tmp, 'accounts.json');

const env = { ...process.env };
delete env.TXGATE_ACCOUNTS_DB;

function run(script: string, args: string[]) {
  const r = spawnSync(process.execPath, [join(root, 'dist', 'scripts', script), ...args], { encoding: 'utf8', timeout: 20_000, env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** No stack trace, no error class. */
const TRACE = /\n\s+at |TypeError|ERR_PARSE_ARGS/;

describe('npm run accounts', () => {
  const grant = ['--chain', String(DEV_CHAIN_ID), '--burst', '2', '--tip', '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720', '--min-tip', '1', '--file', file];
  const cases: [string, string[], RegExp][] = [
    ['a mistyped option', ['create', '--id', 'a', '--rat', '5', ...grant], /^accounts: unknown option --rat \(/],
    ['a negative rate, as the next argument', ['create', '--id', 'a', '--rate', '-1', ...grant], /--rate/],
    ['a negative rate', ['create', '--id', 'a', '--rate=-1', ...grant], /--rate "-1": expected a number > 0/],
    ['a rate that is not a number', ['create', '--id', 'a', '--rate', 'fast', ...grant], /--rate "fast"/],
    ['a burst of zero', ['create', '--id', 'a', '--rate', '5', ...grant.map((g) => (g === '2' ? '0' : g))], /--burst "0": expected an integer ≥ 1/],
    ['a database URL that is not one', ['list', '--db', 'not-a-url'], /--db must be a postgres:\/\//],
    ['an unknown command', ['frobnicate'], /unknown command "frobnicate"/],
  ];
  for (const [what, args, message] of cases)
    it(`${what}: one line, exit 2`, () => {
      const r = run('accounts.js', args);
      assert.equal(r.code, 2, what);
      assert.match(oneLine(r.stderr, { what, trace: TRACE }), message);
    });
  it('--help prints the usage, exit 0; no command prints it and exits 2', () => {
    const help = run('accounts.js', ['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage: npm run accounts/);
    const none = run('accounts.js', []);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^usage: npm run accounts/);
  });
});

describe('npm run demo', () => {
  it('--help documents --url, --rpc and --chain-id, exit 0', () => {
    const r = run('demo.js', ['--help']);
    assert.equal(r.code, 0);
    for (const o of ['--url', '--rpc', '--chain-id']) assert.ok(r.stdout.includes(o), o);
  });
  it('a bad option or value: one line, exit 2', () => {
    for (const args of [['--nope'], ['--url', 'not a url'], ['--chain-id', 'x']]) {
      const r = run('demo.js', args);
      assert.equal(r.code, 2, args.join(' '));
      oneLine(r.stderr, { what: args.join(' '), trace: TRACE });
    }
  });
  it('nothing listening at --url: one line naming it, exit 1', async () => {
    const r = run('demo.js', ['--url', 'http://127.0.0.1:9', '--rpc', 'http://127.0.0.1:9']);
    assert.equal(r.code, 1);
    assert.match(oneLine(r.stderr, { what: 'unreachable', trace: TRACE }), /127\.0\.0\.1:9 did not answer eth_chainId/);
  });
});
