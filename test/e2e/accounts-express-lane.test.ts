/**
 * `npm run accounts -- create|grant-add … --express-lane`: the grant carries `"expressLane": true`
 * (the flag the express lane reads, docs/express-lane.md), and the file stays valid as the
 * service reads it; without the flag, no expressLane field. `--conditional` the same for
 * `"conditional": true` (docs/conditional.md).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAccountsText } from '../../src/accounts/file-text.js';
import { issuedKeys } from '../support/harness.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';
import { tempDir } from '../support/temp-dir.js';

const root = join(import.meta.dirname, '..', '..', '..');
const tmp = tempDir('txgate-accounts-lane-');
const file = join(tmp, 'accounts.json');
const env = { ...process.env };
delete env.TXGATE_ACCOUNTS_DB;

const accounts = (args: string[]) => {
  const r = spawnSync(process.execPath, [join(root, 'dist', 'scripts', 'accounts.js'), ...args, '--file', file], { encoding: 'utf8', env, timeout: 20_000 });
  const key = /(txg_[A-Za-z0-9_-]{43})/.exec(r.stdout)?.[1];
  if (key !== undefined) issuedKeys.push(key);
  return r;
};
const grant = (chain: string) => ['--chain', chain, '--rate', '10', '--burst', '20', '--tip', '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720', '--min-tip', '1'];

describe('npm run accounts: --express-lane', () => {
  it('create and grant-add with --express-lane write expressLane: true on that grant only; the file validates', () => {
    const created = accounts(['create', '--id', 'desk', ...grant(String(DEV_CHAIN_ID)), '--express-lane']);
    assert.equal(created.status, 0, created.stderr);
    const added = accounts(['grant-add', '--id', 'desk', ...grant('10')]);
    assert.equal(added.status, 0, added.stderr);
    const laned = accounts(['grant-add', '--id', 'desk', ...grant('42161'), '--express-lane']);
    assert.equal(laned.status, 0, laned.stderr);
    const text = readFileSync(file, 'utf8');
    const grants = (JSON.parse(text) as { accounts: { grants: { chainId: number; expressLane?: boolean }[] }[] }).accounts[0]!.grants;
    assert.deepEqual(
      grants.map((g) => [g.chainId, g.expressLane]),
      [
        [4663, true],
        [10, undefined],
        [42161, true],
      ],
    );
    const parsed = parseAccountsText(text);
    assert.ok(parsed.ok, JSON.stringify(parsed));
  });
  it('the help names the flag', () => {
    const r = spawnSync(process.execPath, [join(root, 'dist', 'scripts', 'accounts.js'), '--help'], { encoding: 'utf8' });
    assert.match(r.stdout, /--express-lane/);
    assert.match(r.stdout, /grant-set\s+--id ID --chain N/, 'and grant-set (test/e2e/accounts-grant-set.test.ts)');
  });
});

describe('npm run accounts: --conditional', () => {
  it('create and grant-add with --conditional write conditional: true on that grant only; the file validates with it granted', () => {
    rmSync(file, { force: true });
    const created = accounts(['create', '--id', 'quotes', ...grant(String(DEV_CHAIN_ID)), '--conditional']);
    assert.equal(created.status, 0, created.stderr);
    const added = accounts(['grant-add', '--id', 'quotes', ...grant('10')]);
    assert.equal(added.status, 0, added.stderr);
    const text = readFileSync(file, 'utf8');
    const grants = (JSON.parse(text) as { accounts: { grants: { chainId: number; conditional?: boolean }[] }[] }).accounts[0]!.grants;
    assert.deepEqual(
      grants.map((g) => [g.chainId, g.conditional]),
      [
        [4663, true],
        [10, undefined],
      ],
    );
    const parsed = parseAccountsText(text);
    assert.ok(parsed.ok, JSON.stringify(parsed));
    assert.deepEqual(
      [...parsed.snapshot.accounts[0]!.grants.values()].map((g) => [g.chainId, g.conditional]),
      [
        [4663, true],
        [10, false],
      ],
    );
  });
  it('the help names the flag', () => {
    const r = spawnSync(process.execPath, [join(root, 'dist', 'scripts', 'accounts.js'), '--help'], { encoding: 'utf8' });
    assert.match(r.stdout, /--conditional: may use eth_sendRawTransactionConditional/);
  });
});
