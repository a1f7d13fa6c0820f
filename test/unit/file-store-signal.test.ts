/**
 * SIGHUP makes the file store re-read its file, and nothing else does in this test: the store's
 * path is a symlink into another directory (the directory watcher sees no event when the
 * target changes) and its stat poll runs once an hour, so the new account can only arrive
 * through the signal.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { FileAccountStore } from '../../src/accounts/file-store.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { accountsDoc } from '../support/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'txgate-hup-'));
const target = join(dir, 'target', 'accounts.json');
const watched = join(dir, 'watched', 'accounts.json');
const lines: Record<string, unknown>[] = [];
const log = pino(
  { level: 'info' },
  new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  }),
);
const store = new FileAccountStore({ file: watched, log, pollMs: 3_600_000 });

const until = async (what: () => boolean, ms: number): Promise<boolean> => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (what()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return what();
};

describe('file store and SIGHUP', () => {
  before(() => {
    for (const d of ['target', 'watched']) mkdirSync(join(dir, d));
  });
  after(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a change seen by neither the watcher nor the poll is loaded on SIGHUP, and only then', async () => {
    writeFileSync(target, JSON.stringify(accountsDoc([{ id: 'first', keys: ['key-first'] }])));
    symlinkSync(target, watched);
    await store.start();
    assert.equal(store.byKeyHash(keySha256('key-first'))?.id, 'first');

    writeFileSync(
      target,
      JSON.stringify(
        accountsDoc([
          { id: 'first', keys: ['key-first'] },
          { id: 'hup', keys: ['key-hup'] },
        ]),
      ),
    );
    // Without the signal the change stays unseen (the test of the test: if something else
    // loaded it, the SIGHUP assertion below would prove nothing).
    assert.equal(await until(() => store.byKeyHash(keySha256('key-hup')) !== undefined, 300), false);

    const mark = lines.length;
    process.kill(process.pid, 'SIGHUP');
    assert.ok(await until(() => store.byKeyHash(keySha256('key-hup')) !== undefined, 5000), 'the new account is served after SIGHUP');
    const loaded = lines.slice(mark).find((l) => l.msg === 'accounts loaded');
    assert.equal(loaded?.trigger, 'SIGHUP');
    assert.equal(loaded?.accounts, 2);
  });
});
