/**
 * A key hash two accounts of the accounts file claim (a hand edit): the file loads, the key stays
 * with the account that held it (on the first load, the first claimer in document order), only
 * the newcomer's claim on that key is refused (the rest of it serves), logged once while it
 * lasts, and the key moves only when its holder gives it up (logged). The CLI still refuses to
 * write such a document.
 */
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { FileAccountStore } from '../../src/accounts/file-store.js';
import { parseAccountsText } from '../../src/accounts/file-text.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { AccountsFileError, parseAccounts } from '../../src/accounts/parse.js';
import { settleKeyClaims } from '../../src/accounts/key-claims.js';
import { createLogger } from '../../src/log/log.js';
import { newKey, TIP } from '../support/harness.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('txgate-key-claims-');

const acct = (id: string, keys: string[]) => ({
  id,
  keySha256: keys.map(keySha256),
  grants: [{ chainId: DEV_CHAIN_ID, rateLimit: { perSecond: 10, burst: 10 }, tipAddresses: [TIP], minTipWei: '0' }],
});

let n = 0;
function write(file: string, accounts: unknown[]): void {
  const tmp = `${file}.${++n}.tmp`;
  writeFileSync(tmp, JSON.stringify({ accounts }));
  renameSync(tmp, file);
}

function fileStore(file: string): { store: FileAccountStore; lines: () => Record<string, unknown>[] } {
  const lines: string[] = [];
  const log = createLogger({
    level: 'debug',
    destination: new Writable({ write: (c: Buffer, _e, cb) => (lines.push(...c.toString().split('\n').filter(Boolean)), cb()) }),
  });
  // An hourly poll and no watcher events relied on: each reload below is asked for.
  const store = new FileAccountStore({ file, log, pollMs: 3_600_000 });
  return { store, lines: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

/**
 * A reload asked for just after a write: 'loaded', or 'unchanged' where the directory watch
 * loaded the same write first (its settle time is short); what is in force is asserted after.
 */
const loadedNow = (r: string) => r === 'loaded' || r === 'unchanged';

const claimLines = (lines: Record<string, unknown>[]) => lines.filter((l) => String(l.msg).includes('the claim is refused'));

describe('a key two accounts of the file claim', () => {
  it('on the first load stays with the first in document order; the newcomer serves its other keys; logged once', async () => {
    const file = join(dir, 'first.json');
    const shared = newKey();
    const own = newKey();
    write(file, [acct('alpha', [shared]), acct('beta', [own, shared])]);
    const { store, lines } = fileStore(file);
    await store.start();
    try {
      assert.equal(store.ready, true, 'the file loads');
      assert.equal(store.byKeyHash(keySha256(shared))?.id, 'alpha');
      assert.equal(store.byKeyHash(keySha256(own))?.id, 'beta', "the rest of beta's account stays in force");
      assert.equal(store.size, 2);
      await store.reload('SIGHUP');
      await store.reload('SIGHUP');
      const claims = claimLines(lines());
      assert.equal(claims.length, 1, 'logged once, however many reloads');
      assert.equal(claims[0]!.account, 'beta');
      assert.equal(claims[0]!.holder, 'alpha');
      assert.ok(!JSON.stringify(lines()).includes(shared), 'the key itself is never logged');
    } finally {
      store.close();
    }
  });

  it('stays with its holder when a newcomer is put before it; moves only when the holder gives it up (logged)', async () => {
    const file = join(dir, 'held.json');
    const shared = newKey();
    write(file, [acct('holder', [shared]), acct('other', [newKey()])]);
    const { store, lines } = fileStore(file);
    await store.start();
    try {
      assert.equal(store.byKeyHash(keySha256(shared))?.id, 'holder');
      // A hand edit puts a newcomer first in the file, listing the key the holder holds.
      write(file, [acct('newcomer', [shared]), acct('holder', [shared]), acct('other', [newKey()])]);
      assert.ok(loadedNow(await store.reload('test')));
      assert.equal(store.byKeyHash(keySha256(shared))?.id, 'holder', 'the key never moves while its holder lists it');
      assert.equal(store.size, 3, 'the newcomer is in force, without that key');
      assert.equal(claimLines(lines()).length, 1);
      assert.equal(claimLines(lines())[0]!.account, 'newcomer');
      // The holder gives it up: the claimer that waited gets it, and that is logged.
      write(file, [acct('newcomer', [shared]), acct('holder', [newKey()])]);
      assert.ok(loadedNow(await store.reload('test')));
      assert.equal(store.byKeyHash(keySha256(shared))?.id, 'newcomer');
      assert.ok(lines().some((l) => String(l.msg).includes('given up by its holder: now held by "newcomer"')));
      assert.equal(claimLines(lines()).length, 1, 'nothing more refused');
    } finally {
      store.close();
    }
  });

  it('a key listed twice in one account still refuses the file (the previous snapshot stays)', async () => {
    const file = join(dir, 'twice.json');
    const k = newKey();
    write(file, [acct('solo', [k])]);
    const { store, lines } = fileStore(file);
    await store.start();
    try {
      write(file, [acct('solo', [k, k])]);
      assert.equal(await store.reload('test'), 'invalid');
      assert.equal(store.byKeyHash(keySha256(k))?.id, 'solo');
      assert.ok(lines().some((l) => String(l.msg).includes('duplicate key hash')));
    } finally {
      store.close();
    }
  });
});

describe('the rules behind it', () => {
  it('the CLI (parseAccounts by default) still refuses a document where two accounts list one key', () => {
    const k = newKey();
    assert.throws(
      () => parseAccounts({ accounts: [acct('a', [k]), acct('b', [k])] }),
      (e: unknown) => e instanceof AccountsFileError && /duplicate key hash/.test(e.message),
    );
  });

  it('settleKeyClaims: the holder in force keeps every contested key; otherwise the first claimer; the third claimer is refused too', () => {
    const [k1, k2] = [newKey(), newKey()];
    const parsed = parseAccountsText(JSON.stringify({ accounts: [acct('a', [k1]), acct('b', [k1, k2]), acct('c', [k2, k1])] }));
    assert.ok(parsed.ok);
    const first = settleKeyClaims(parsed.snapshot, () => undefined);
    assert.equal(first.snapshot.byHash.get(keySha256(k1))?.id, 'a');
    assert.equal(first.snapshot.byHash.get(keySha256(k2))?.id, 'b');
    assert.deepEqual(first.refused.map((r) => `${r.claimer}->${r.holder}`).sort(), ['b->a', 'c->a', 'c->b']);
    const held = new Map([
      [keySha256(k1), 'c'],
      [keySha256(k2), 'c'],
    ]);
    const later = settleKeyClaims(parsed.snapshot, (h) => held.get(h));
    assert.equal(later.snapshot.byHash.get(keySha256(k1))?.id, 'c');
    assert.equal(later.snapshot.byHash.get(keySha256(k2))?.id, 'c');
    // A holder in force that no longer claims the key does not keep it.
    const gone = settleKeyClaims(parsed.snapshot, () => 'zed');
    assert.equal(gone.snapshot.byHash.get(keySha256(k1))?.id, 'a');
  });
});
