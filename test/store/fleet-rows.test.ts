/**
 * The fleet store against rows that try to take it down, on a real PostgreSQL: huge, malformed
 * and duplicate-key rows refused alone (every store stays up, a restart too), the database
 * refusing what the edges would (limits, a key held twice, a migration over clashing data), keys
 * on the edge and at its start, and changes fetched by row (a flood of notifications fetches no
 * documents). Large grants, locks and the public port: fleet-load.test.ts.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import postgres from 'postgres';
import { keySha256 } from '../../src/accounts/keys.js';
import { CLIENT_OPTIONS } from '../../src/accounts/postgres/connection.js';
import { migrate, migrations } from '../../src/accounts/postgres/migrate.js';
import { StoreState } from '../../src/accounts/postgres/state.js';
import { eventually, newKey } from '../support/harness.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { useFleetDb } from '../support/fleet-db.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const db = useFleetDb();
const { doc, lit, put, store, loaded, closeAll, unguarded } = db;

describe('rows built to take an edge down', () => {
  const owner = newKey();
  before(() => {
    db.pg.psql('DELETE FROM txgate_accounts');
    put(doc('acme', [owner]));
    unguarded(() => {
      // 6.5 million tip addresses (short ones): ~19.5 MB of JSON in one row.
      db.pg.psql(
        `INSERT INTO txgate_accounts (id, doc) SELECT 'huge', jsonb_build_object('id', 'huge', 'keySha256', '[]'::jsonb, 'grants', jsonb_build_array(jsonb_build_object('chainId', ${DEV_CHAIN_ID}, 'rateLimit', '{"perSecond":1,"burst":1}'::jsonb, 'minTipWei', '0', 'tipAddresses', (SELECT jsonb_agg(0) FROM generate_series(1, 6500000) g))))`,
      );
      // Under the size limit, over the count: 100,001 addresses.
      db.pg.psql(
        `INSERT INTO txgate_accounts (id, doc) SELECT 'many', jsonb_build_object('id', 'many', 'keySha256', '[]'::jsonb, 'grants', jsonb_build_array(jsonb_build_object('chainId', ${DEV_CHAIN_ID}, 'rateLimit', '{"perSecond":1,"burst":1}'::jsonb, 'minTipWei', '0', 'tipAddresses', (SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 100001) g))))`,
      );
      put({ id: 'shapeless', keySha256: 'x', grants: { a: 1 }, submissionEnabled: 'yes' });
      put({ id: 'nested', keySha256: [], grants: JSON.parse('['.repeat(2000) + ']'.repeat(2000)) as unknown });
      put({ id: 'weird', keySha256: [keySha256(newKey())], grants: [], __proto__x: 1, constructor: { prototype: 1 }, ['k'.repeat(5000)]: 1 });
      put(doc('thief', [owner, newKey()]));
    });
  });

  it('each is refused alone, logged once with its id and why; the rest serve; the key stays with its holder; a restart stays up', async () => {
    for (let round = 0; round < 2; round++) {
      const { store: s, lines } = store(300);
      await loaded(s, lines);
      assert.equal(s.byKeyHash(keySha256(owner))?.id, 'acme', 'the key stays with the account that held it');
      await eventually(() => s.state.get(StoreState.RESYNCS) >= 3, 20_000).catch((e: unknown) => {
        throw new Error(`${(e as Error).message}: resyncs ${s.state.get(StoreState.RESYNCS)}; log:\n${JSON.stringify(lines()).slice(0, 4000)}`);
      }); // several resyncs: logged once still
      const refused = lines().filter((l) => l.msg !== undefined && String(l.msg).startsWith('account row refused'));
      const ids = refused.map((l) => l.account).sort();
      assert.deepEqual(ids, ['huge', 'many', 'nested', 'shapeless', 'weird'], JSON.stringify(refused.map((l) => l.msg)));
      const why = (id: string) => String(refused.find((l) => l.account === id)!.msg);
      assert.match(why('huge'), /the document is \d+ bytes, more than the 8388608/);
      assert.match(why('many'), /tipAddresses: 100001 entries, more than the 100000/);
      assert.match(why('shapeless'), /keySha256: must be an array/);
      for (const l of refused) assert.ok(String(l.msg).length < 4_000, 'a refusal is named in a short line');
      const claims = lines().filter((l) => typeof l.msg === 'string' && l.msg.includes('the claim is refused'));
      assert.equal(claims.length, 1, 'the refused claim is logged once');
      assert.equal(claims[0]!.account, 'thief');
      assert.equal(claims[0]!.holder, 'acme');
      // 'weird' is refused too (unknown fields), and serves nothing; 'thief' serves its other key.
      assert.equal(s.size, 2, 'acme and thief (without the key acme holds)');
      await closeAll();
    }
  });
});

describe('the database refuses what the edges would', () => {
  it('a row past a limit, a key another account holds, a key listed twice', () => {
    db.pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    put(doc('acme', [k]));
    const tips = "(SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 100001) g)";
    assert.throws(
      () =>
        db.pg.psql(
          `INSERT INTO txgate_accounts (id, doc) SELECT 'big', jsonb_build_object('id', 'big', 'keySha256', '[]'::jsonb, 'grants', jsonb_build_array(jsonb_build_object('tipAddresses', ${tips})))`,
        ),
      /account "big" refused: grants\[0\]\.tipAddresses: 100001 entries, more than the 100000/,
    );
    const keys = Array.from({ length: 65 }, () => keySha256(newKey()));
    assert.throws(() => put({ ...doc('keys', []), keySha256: keys }), /keySha256: 65 entries, more than the 64/);
    assert.throws(
      () =>
        db.pg.psql(
          `INSERT INTO txgate_accounts (id, doc) VALUES ('bloat', jsonb_set(${lit(doc('bloat', []))}::jsonb, '{note}', to_jsonb(repeat('x', 8388608))))`,
        ),
      /the document is \d+ bytes, more than the 8388608/,
    );
    assert.throws(() => put(doc('thief', [k])), /account "thief" refused: key hash [0-9a-f]{12}… is held by account "acme"/);
    const twice = newKey();
    assert.throws(() => put(doc('twice', [twice, twice])), /key hash [0-9a-f]{12}… is listed twice/);
    assert.equal(db.pg.psql("SELECT string_agg(id, ',' ORDER BY id) FROM txgate_accounts"), 'acme\n');
    assert.equal(db.pg.psql('SELECT count(*) FROM txgate_account_keys'), '1\n');
    // A key given up can be taken by another account; a deleted account's keys are free.
    put(doc('acme', [newKey()]));
    put(doc('thief', [k]));
    db.pg.psql("DELETE FROM txgate_accounts WHERE id = 'thief'");
    put(doc('third', [k]));
    assert.equal(db.pg.psql(`SELECT account_id FROM txgate_account_keys WHERE key_sha256 = '${keySha256(k)}'`), 'third\n');
  });

  it('migration 002 moves the keys of existing rows, and refuses to run, naming the accounts, where two share a key', async () => {
    db.pg.psql('CREATE DATABASE m2', 'postgres');
    const [first] = migrations();
    db.pg.psqlScript(
      `${first!.sql}\nCREATE TABLE txgate_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());\nINSERT INTO txgate_migrations (version, name) VALUES (1, 'accounts');\n`,
      'm2',
    );
    const shared = newKey();
    const row = (d: Record<string, unknown>) => db.pg.psql(`INSERT INTO txgate_accounts (id, doc) VALUES ('${d.id as string}', ${lit(d)})`, 'm2');
    row(doc('alpha', [shared, newKey()]));
    row(doc('beta', [shared]));
    row(doc('gamma', [newKey()]));
    const sql = postgres(db.pg.url('m2'), { ...CLIENT_OPTIONS, max: 1 });
    try {
      await assert.rejects(migrate(sql), /migration 002 refused: accounts share a key \(key hash [0-9a-f]{12}… listed by alpha, beta\)/);
      assert.equal(db.pg.psql('SELECT count(*) FROM txgate_migrations', 'm2'), '1\n', 'nothing applied');
      db.pg.psql(`UPDATE txgate_accounts SET doc = ${lit(doc('beta', [newKey()]))} WHERE id = 'beta'`, 'm2');
      assert.deepEqual(await migrate(sql), ['002_limits_and_keys']);
      assert.equal(db.pg.psql('SELECT count(*) FROM txgate_account_keys', 'm2'), '4\n');
      assert.throws(() => db.pg.psql(`UPDATE txgate_accounts SET doc = ${lit(doc('gamma', [shared]))} WHERE id = 'gamma'`, 'm2'), /held by account "alpha"/);
    } finally {
      await sql.end();
    }
  });
});

describe('keys on the edge', () => {
  it('a newcomer claiming a key another account holds is refused (logged once); the key moves only when its holder gives it up', async () => {
    db.pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    put(doc('first', [k]));
    const { store: s, lines } = store(200);
    await loaded(s);
    assert.equal(s.byKeyHash(keySha256(k))?.id, 'first');
    unguarded(() => put(doc('second', [k])));
    await eventually(() => lines().some((l) => l.account === 'second' && String(l.msg).includes('the claim is refused')), 5_000);
    await eventually(() => s.state.get(StoreState.RESYNCS) >= 3, 5_000);
    assert.equal(s.byKeyHash(keySha256(k))?.id, 'first', 'the key stays with the account that held it first');
    assert.equal(lines().filter((l) => String(l.msg).includes('the claim is refused')).length, 1);
    put(doc('first', [newKey()])); // the holder gives it up
    await eventually(() => s.byKeyHash(keySha256(k))?.id === 'second', 5_000);
    assert.ok(
      lines().some((l) => String(l.msg).includes('given up by its holder: now held by "second"')),
      'the move is logged',
    );
    s.close();
  });
});

describe('keys on the edge at start', () => {
  it('two rows claiming one key (the key table bypassed): the first by id holds it, whichever row is read first (a large row is read last, on the checker thread)', async () => {
    db.pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    const own = newKey();
    unguarded(() => {
      // 'aardvark' is first by id but large (~90 KB: read and checked off-thread, after the small rows).
      db.pg.psql(
        `INSERT INTO txgate_accounts (id, doc) SELECT 'aardvark', jsonb_build_object('id', 'aardvark', 'keySha256', ${lit([keySha256(k)])}::jsonb, 'grants', jsonb_build_array(jsonb_build_object('chainId', ${DEV_CHAIN_ID}, 'rateLimit', '{"perSecond":1,"burst":1}'::jsonb, 'minTipWei', '0', 'tipAddresses', (SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 2000) g))))`,
      );
      put(doc('zebra', [own, k]));
    });
    for (let round = 0; round < 2; round++) {
      const { store: s, lines } = store(60_000);
      await loaded(s, lines);
      assert.equal(s.byKeyHash(keySha256(k))?.id, 'aardvark', 'the first by id holds the key');
      assert.equal(s.byKeyHash(keySha256(own))?.id, 'zebra', "the rest of zebra's account serves");
      const claims = lines().filter((l) => String(l.msg).includes('the claim is refused'));
      assert.equal(claims.length, 1, JSON.stringify(claims));
      assert.equal(claims[0]!.account, 'zebra');
      assert.equal(claims[0]!.holder, 'aardvark');
      const mirrored = new Map(s.current().map((c) => [c.id, c.keys]));
      assert.deepEqual(mirrored.get('zebra'), [keySha256(own)], 'the threads are handed zebra without the key');
      assert.deepEqual(mirrored.get('aardvark'), [keySha256(k)]);
      await closeAll();
    }
  });
});

describe('changes by row', () => {
  it('a change fetches that row alone; a flood of notifications (held versions, unknown ids, junk) fetches no document', async () => {
    db.pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    for (let i = 0; i < 20; i++) put(doc(`acct${i}`, [newKey()]));
    put(doc('acme', [k]));
    const { store: s } = store(60_000); // no resync during the test
    await loaded(s);
    assert.equal(s.size, 21);
    const fetched = () => s.state.get(StoreState.ROWS_FETCHED);
    assert.equal(fetched(), 21, 'the first load fetched every row once');
    const version = Number(db.pg.psql("SELECT version FROM txgate_accounts WHERE id = 'acme'"));
    const notes = s.state.get(StoreState.NOTIFICATIONS);
    db.pg.psql(
      `SELECT pg_notify('txgate_accounts', p) FROM (
         SELECT json_build_object('id', 'acme', 'version', ${version})::text AS p
         UNION ALL SELECT json_build_object('id', 'nobody' || g, 'version', g)::text FROM generate_series(1, 200) g
         UNION ALL SELECT 'junk ' || g FROM generate_series(1, 200) g
         UNION ALL SELECT repeat('x', 7000) || g FROM generate_series(1, 50) g
         UNION ALL SELECT json_build_object('id', 'acme', 'version', 'x' || g)::text FROM generate_series(1, 50) g) n`,
    );
    await eventually(() => s.state.get(StoreState.NOTIFICATIONS) - notes >= 500, 5_000);
    // A real change, after the flood: the one row it names is fetched, and nothing else was.
    put(doc('acme', [newKey()]));
    await eventually(() => s.byKeyHash(keySha256(k)) === undefined, 5_000);
    assert.equal(fetched(), 22, 'one document fetched: the changed row');
    // A notification naming a version higher than the row's: its version is read, its document not fetched again.
    db.pg.psql(`SELECT pg_notify('txgate_accounts', json_build_object('id', 'acme', 'version', 999999)::text)`);
    db.pg.psql("UPDATE txgate_accounts SET doc = doc WHERE id = 'acct3'");
    await eventually(() => fetched() === 23, 5_000);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(fetched(), 23);
    // A deleted row leaves the snapshot.
    db.pg.psql("DELETE FROM txgate_accounts WHERE id = 'acct4'");
    await eventually(() => s.size === 20, 5_000);
    s.close();
  });
});
