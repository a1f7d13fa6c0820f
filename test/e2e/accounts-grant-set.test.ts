/**
 * `npm run accounts -- grant-set`: changes only the fields named on an existing grant (the file
 * store here; the database store in test/store/fleet-edges.test.ts), prints each change, and
 * leaves every other field as it was; grant-add on a chain already granted names grant-set.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAccountsText } from '../../src/accounts/file-text.js';
import { AdminError, fileTarget, setGrant } from '../../src/accounts/admin.js';
import { AccountsFileError } from '../../src/accounts/parse.js';
import { issuedKeys } from '../support/harness.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';
import { tempDir } from '../support/temp-dir.js';

const root = join(import.meta.dirname, '..', '..', '..');
const tmp = tempDir('txgate-accounts-set-');
const file = join(tmp, 'accounts.json');
const env = { ...process.env };
delete env.TXGATE_ACCOUNTS_DB;
const TIP = '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720';
const SENDER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

const accounts = (args: string[]) => {
  const r = spawnSync(process.execPath, [join(root, 'dist', 'scripts', 'accounts.js'), ...args, '--file', file], { encoding: 'utf8', env, timeout: 20_000 });
  const key = /(txg_[A-Za-z0-9_-]{43})/.exec(r.stdout)?.[1];
  if (key !== undefined) issuedKeys.push(key);
  return r;
};
const grants = () => (JSON.parse(readFileSync(file, 'utf8')) as { accounts: { grants: Record<string, unknown>[] }[] }).accounts[0]!.grants;

/** The grant `dev` is created with, and given again. */
const GRANT = ['--chain', String(DEV_CHAIN_ID), '--rate', '5', '--burst', '9', '--tip', TIP, '--min-tip', '7'];

describe('npm run accounts -- grant-set', () => {
  it('grant-add on a chain already granted is refused naming grant-set, with the account and chain', () => {
    const created = accounts(['create', '--id', 'dev', ...GRANT, '--sync', '--senders', SENDER]);
    assert.equal(created.status, 0, created.stderr);
    const again = accounts(['grant-add', '--id', 'dev', ...GRANT, '--conditional']);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /already has a grant for chain 4663: .*npm run accounts -- grant-set --id dev --chain 4663/);
  });
  it('--conditional adds that flag alone; every other field stays', () => {
    const before = grants()[0]!;
    const r = accounts(['grant-set', '--id', 'dev', '--chain', String(DEV_CHAIN_ID), '--conditional']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /conditional: unset → true/);
    assert.deepEqual(grants()[0], { ...before, conditional: true });
    assert.ok(parseAccountsText(readFileSync(file, 'utf8')).ok);
  });
  it('--rate changes the rate and keeps the burst; --no-sync removes sync; --any-sender removes the allow-list; --min-tip', () => {
    const before = grants()[0]!;
    const r = accounts(['grant-set', '--id', 'dev', '--chain', String(DEV_CHAIN_ID), '--rate', '50', '--no-sync', '--any-sender', '--min-tip', '1000']);
    assert.equal(r.status, 0, r.stderr);
    const after = grants()[0]!;
    assert.deepEqual(after.rateLimit, { perSecond: 50, burst: 9 });
    assert.equal(after.sync, undefined);
    assert.equal(after.senders, undefined);
    assert.equal(after.minTipWei, '1000');
    const { rateLimit: _r, sync: _s, senders: _x, minTipWei: _m, ...rest } = before;
    const { rateLimit: _r2, minTipWei: _m2, ...restAfter } = after;
    assert.deepEqual(restAfter, rest, 'nothing else changed');
    for (const line of ['rateLimit: {"perSecond":5,"burst":9} → {"perSecond":50,"burst":9}', 'sync: true → unset', 'minTipWei: "7" → "1000"'])
      assert.ok(r.stdout.includes(line), r.stdout);
  });
  it('the same values again: unchanged, said so', () => {
    const r = accounts(['grant-set', '--id', 'dev', '--chain', String(DEV_CHAIN_ID), '--rate', '50']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /unchanged/);
  });
  it('refusals by the command: no field named, contradicting flags; exit 2, nothing written', () => {
    const text = readFileSync(file, 'utf8');
    const cases: [string[], RegExp][] = [
      [['--chain', String(DEV_CHAIN_ID)], /give at least one/],
      [['--chain', String(DEV_CHAIN_ID), '--sync', '--no-sync'], /--sync and --no-sync contradict/],
    ];
    for (const [args, want] of cases) {
      const r = accounts(['grant-set', '--id', 'dev', ...args]);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, want);
    }
    assert.equal(readFileSync(file, 'utf8'), text, 'a refused change writes nothing');
  });
  it('refusals by the change (setGrant, what the command runs): a chain not granted names grant-add, an invalid value the field; nothing written', async () => {
    const text = readFileSync(file, 'utf8');
    const t = fileTarget(file);
    await assert.rejects(
      setGrant(t, 'dev', 10, { sync: true }),
      (e: unknown) => e instanceof AdminError && /no grant for chain 10: add one with `npm run accounts -- grant-add --id dev --chain 10/.test(e.message),
    );
    await assert.rejects(
      setGrant(t, 'dev', 4663, { tipAddresses: ['0x1234'] }),
      (e: unknown) => e instanceof AccountsFileError && /tipAddresses\[0\]/.test(e.message),
    );
    await assert.rejects(setGrant(t, 'nobody', 4663, { sync: true }), /no account "nobody"/);
    assert.equal(readFileSync(file, 'utf8'), text, 'a refused change writes nothing');
  });
});
