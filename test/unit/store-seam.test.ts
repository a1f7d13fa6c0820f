/**
 * The account store seam holds: outside src/accounts/, the code imports from the account layer
 * only its seam (the model and store types, the kinds' opener, the accounts config section, key
 * hashing) and names no store kind's technology, so a new store touches src/accounts/ alone
 * (docs/architecture.md, "Adding an account store").
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { openMirror, openSharedStore, openStore } from '../../src/accounts/open-store.js';
import { createLogger } from '../../src/log/log.js';

const SRC = join(import.meta.dirname, '../../../src');
const SEAM = new Set(['types.ts', 'open-store.ts', 'config.ts', 'keys.ts']);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}
const outside = files(SRC).filter((f) => !relative(SRC, f).startsWith('accounts/'));
/** The throwaway PostgreSQL server tests and benches start (src/dev/postgres.ts): a database process, not a store, which nothing in src/ imports. */
const THROWAWAY_SERVER = 'dev/postgres.ts';

describe('the account store seam', () => {
  it('outside src/accounts/, only the seam of the account layer is imported', () => {
    const wrong: string[] = [];
    for (const f of outside)
      for (const m of readFileSync(f, 'utf8').matchAll(/from '(?:\.\.?\/)+accounts\/([^']+)\.js'/g))
        if (!SEAM.has(`${m[1]}.ts`)) wrong.push(`${relative(SRC, f)} -> accounts/${m[1]}`);
    assert.deepEqual(wrong, []);
  });

  it('outside src/accounts/, nothing names PostgreSQL but the throwaway server, which nothing in src/ imports', () => {
    const naming = outside.filter((f) => /postgres|sqlstate/i.test(readFileSync(f, 'utf8'))).map((f) => relative(SRC, f));
    assert.deepEqual(naming, [THROWAWAY_SERVER]);
    const importing = files(SRC).filter((f) => /from '(?:\.\.?\/)+(?:dev\/)?postgres\.js'/.test(readFileSync(f, 'utf8')));
    assert.deepEqual(importing, []);
  });

  it('a kind says whether it is shared across threads: the file store is opened by each thread, the fleet store once, mirrored', () => {
    const log = createLogger({ level: 'silent' });
    const chains = [{ chainId: 1, hosts: ['a.example'], sequencers: ['http://127.0.0.1:9'] }];
    const file = parseConfig({ chains }, '/tmp', {}).accounts;
    assert.equal(openSharedStore(file, log), null);
    assert.throws(() => openMirror(file, null), /not shared/);
    const store = openStore(file, log);
    assert.equal(store.hearsSignal, true, 'the file store hears SIGHUP on the main thread itself');
    store.close();

    const fleet = parseConfig({ chains, accounts: { store: 'postgres', url: 'postgres://u:p@127.0.0.1:9/db', maxStaleMs: 5000 } }, '/tmp', {}).accounts;
    const shared = openSharedStore(fleet, log);
    assert.ok(shared !== null, 'the fleet store runs once per process');
    assert.notEqual(shared.hearsSignal, true, 'the service calls its reload on SIGHUP');
    const mirror = openMirror(fleet, shared.mirrorSeed());
    assert.equal(mirror.ready, false, 'nothing loaded yet');
    assert.equal(mirror.problem, null);
    assert.ok(mirror.state !== undefined && mirror.state.ageMs() === Number.POSITIVE_INFINITY, 'the mirror reads the shared state');
    shared.close();
  });
});
