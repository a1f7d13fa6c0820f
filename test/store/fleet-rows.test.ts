/**
 * The fleet store against rows, roles and locks that try to take it down, on a real PostgreSQL:
 * huge, malformed and duplicate-key rows refused alone (every store stays up, a restart too),
 * the database refusing what the edges would (limits, a key held twice, a migration over
 * clashing data), changes fetched by row (a flood of notifications fetches no documents), a
 * locked table costing a fixed number of backends, a frozen listener noticed by its heartbeat,
 * and an edge's public port opening only after its first load.
 */
import assert from 'node:assert/strict';
import { createServer, connect, type Server } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { toChecksumAddress } from '@ethereumjs/util';
import postgres from 'postgres';
import { keySha256 } from '../../src/accounts/keys.js';
import { migrate, migrations } from '../../src/accounts/postgres/migrate.js';
import { PostgresAccountStore } from '../../src/accounts/postgres/store.js';
import { CLIENT_OPTIONS } from '../../src/accounts/postgres/connection.js';
import { StoreState } from '../../src/accounts/postgres/state.js';
import { createLogger } from '../../src/log.js';
import { eventually, newKey, startGate, TIP, type Gate } from '../support/harness.js';
import { send } from '../support/http.js';
import { TestPostgres } from '../../src/dev/postgres.js';
import { freePort } from '../../src/base/free-port.js';
import { keysNeverLogged } from '../support/gate-fixture.js';

keysNeverLogged();

let pg: TestPostgres;
const stores: PostgresAccountStore[] = [];

before(async () => {
  pg = await TestPostgres.start();
  const sql = postgres(pg.url(), { ...CLIENT_OPTIONS, max: 1 });
  await migrate(sql);
  await sql.end();
});
after(async () => {
  for (const s of stores) s.close();
  await pg.destroy();
});

function doc(id: string, keys: string[], extra: Record<string, unknown> = {}, grant: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    keySha256: keys.map(keySha256),
    grants: [{ chainId: 4663, rateLimit: { perSecond: 10, burst: 10 }, tipAddresses: [TIP], minTipWei: '0', ...grant }],
    ...extra,
  };
}

const lit = (v: unknown) => `'${JSON.stringify(v).replace(/'/g, "''")}'`;
function put(d: Record<string, unknown>): void {
  pg.psql(`INSERT INTO txgate_accounts (id, doc) VALUES ('${d.id as string}', ${lit(d)}) ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc`);
}

function store(resyncMs = 300): { store: PostgresAccountStore; lines: () => Record<string, unknown>[] } {
  const lines: string[] = [];
  const log = createLogger({
    level: 'debug',
    destination: new Writable({ write: (c: Buffer, _e, cb) => (lines.push(...c.toString().split('\n').filter(Boolean)), cb()) }),
  });
  const s = new PostgresAccountStore({ url: pg.url(), maxStaleMs: 30_000, resyncMs, log });
  stores.push(s);
  return { store: s, lines: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

async function loaded(s: PostgresAccountStore, lines?: () => Record<string, unknown>[]): Promise<void> {
  await s.start();
  await eventually(() => s.ready, 20_000).catch((e: unknown) => {
    throw new Error(`${(e as Error).message}: not loaded; store log:\n${JSON.stringify(lines?.() ?? []).slice(0, 4000)}`);
  });
}

/** Closes every store the tests opened, and waits for their backends to go. */
async function closeAll(): Promise<void> {
  for (const s of stores.splice(0)) s.close();
  await eventually(() => backends() === 0, 10_000);
}

/** The writes the edges would refuse, let through by a hand with the owner's rights. */
function unguarded(run: () => void): void {
  pg.psql('ALTER TABLE txgate_accounts DISABLE TRIGGER txgate_accounts_limits; ALTER TABLE txgate_accounts DISABLE TRIGGER txgate_accounts_keys');
  try {
    run();
  } finally {
    pg.psql('ALTER TABLE txgate_accounts ENABLE TRIGGER txgate_accounts_limits; ALTER TABLE txgate_accounts ENABLE TRIGGER txgate_accounts_keys');
  }
}

describe('rows built to take an edge down', () => {
  const owner = newKey();
  before(() => {
    pg.psql('DELETE FROM txgate_accounts');
    put(doc('acme', [owner]));
    unguarded(() => {
      // 6.5 million tip addresses (short ones): ~19.5 MB of JSON in one row.
      pg.psql(
        `INSERT INTO txgate_accounts (id, doc) SELECT 'huge', jsonb_build_object('id', 'huge', 'keySha256', '[]'::jsonb, 'grants', jsonb_build_array(jsonb_build_object('chainId', 4663, 'rateLimit', '{"perSecond":1,"burst":1}'::jsonb, 'minTipWei', '0', 'tipAddresses', (SELECT jsonb_agg(0) FROM generate_series(1, 6500000) g))))`,
      );
      // Under the size limit, over the count: 100,001 addresses.
      pg.psql(
        `INSERT INTO txgate_accounts (id, doc) SELECT 'many', jsonb_build_object('id', 'many', 'keySha256', '[]'::jsonb, 'grants', jsonb_build_array(jsonb_build_object('chainId', 4663, 'rateLimit', '{"perSecond":1,"burst":1}'::jsonb, 'minTipWei', '0', 'tipAddresses', (SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 100001) g))))`,
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
    pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    put(doc('acme', [k]));
    const tips = "(SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 100001) g)";
    assert.throws(
      () =>
        pg.psql(
          `INSERT INTO txgate_accounts (id, doc) SELECT 'big', jsonb_build_object('id', 'big', 'keySha256', '[]'::jsonb, 'grants', jsonb_build_array(jsonb_build_object('tipAddresses', ${tips})))`,
        ),
      /account "big" refused: grants\[0\]\.tipAddresses: 100001 entries, more than the 100000/,
    );
    const keys = Array.from({ length: 65 }, () => keySha256(newKey()));
    assert.throws(() => put({ ...doc('keys', []), keySha256: keys }), /keySha256: 65 entries, more than the 64/);
    assert.throws(
      () =>
        pg.psql(`INSERT INTO txgate_accounts (id, doc) VALUES ('bloat', jsonb_set(${lit(doc('bloat', []))}::jsonb, '{note}', to_jsonb(repeat('x', 8388608))))`),
      /the document is \d+ bytes, more than the 8388608/,
    );
    assert.throws(() => put(doc('thief', [k])), /account "thief" refused: key hash [0-9a-f]{12}… is held by account "acme"/);
    const twice = newKey();
    assert.throws(() => put(doc('twice', [twice, twice])), /key hash [0-9a-f]{12}… is listed twice/);
    assert.equal(pg.psql("SELECT string_agg(id, ',' ORDER BY id) FROM txgate_accounts"), 'acme\n');
    assert.equal(pg.psql('SELECT count(*) FROM txgate_account_keys'), '1\n');
    // A key given up can be taken by another account; a deleted account's keys are free.
    put(doc('acme', [newKey()]));
    put(doc('thief', [k]));
    pg.psql("DELETE FROM txgate_accounts WHERE id = 'thief'");
    put(doc('third', [k]));
    assert.equal(pg.psql(`SELECT account_id FROM txgate_account_keys WHERE key_sha256 = '${keySha256(k)}'`), 'third\n');
  });

  it('migration 002 moves the keys of existing rows, and refuses to run, naming the accounts, where two share a key', async () => {
    pg.psql('CREATE DATABASE m2', 'postgres');
    const [first] = migrations();
    pg.psqlScript(
      `${first!.sql}\nCREATE TABLE txgate_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());\nINSERT INTO txgate_migrations (version, name) VALUES (1, 'accounts');\n`,
      'm2',
    );
    const shared = newKey();
    const row = (d: Record<string, unknown>) => pg.psql(`INSERT INTO txgate_accounts (id, doc) VALUES ('${d.id as string}', ${lit(d)})`, 'm2');
    row(doc('alpha', [shared, newKey()]));
    row(doc('beta', [shared]));
    row(doc('gamma', [newKey()]));
    const sql = postgres(pg.url('m2'), { ...CLIENT_OPTIONS, max: 1 });
    try {
      await assert.rejects(migrate(sql), /migration 002 refused: accounts share a key \(key hash [0-9a-f]{12}… listed by alpha, beta\)/);
      assert.equal(pg.psql('SELECT count(*) FROM txgate_migrations', 'm2'), '1\n', 'nothing applied');
      pg.psql(`UPDATE txgate_accounts SET doc = ${lit(doc('beta', [newKey()]))} WHERE id = 'beta'`, 'm2');
      assert.deepEqual(await migrate(sql), ['002_limits_and_keys']);
      assert.equal(pg.psql('SELECT count(*) FROM txgate_account_keys', 'm2'), '4\n');
      assert.throws(() => pg.psql(`UPDATE txgate_accounts SET doc = ${lit(doc('gamma', [shared]))} WHERE id = 'gamma'`, 'm2'), /held by account "alpha"/);
    } finally {
      await sql.end();
    }
  });
});

describe('keys on the edge', () => {
  it('a newcomer claiming a key another account holds is refused (logged once); the key moves only when its holder gives it up', async () => {
    pg.psql('DELETE FROM txgate_accounts');
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
    pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    const own = newKey();
    unguarded(() => {
      // 'aardvark' is first by id but large (~90 KB: read and checked off-thread, after the small rows).
      pg.psql(
        `INSERT INTO txgate_accounts (id, doc) SELECT 'aardvark', jsonb_build_object('id', 'aardvark', 'keySha256', ${lit([keySha256(k)])}::jsonb, 'grants', jsonb_build_array(jsonb_build_object('chainId', 4663, 'rateLimit', '{"perSecond":1,"burst":1}'::jsonb, 'minTipWei', '0', 'tipAddresses', (SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 2000) g))))`,
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
    pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    for (let i = 0; i < 20; i++) put(doc(`acct${i}`, [newKey()]));
    put(doc('acme', [k]));
    const { store: s } = store(60_000); // no resync during the test
    await loaded(s);
    assert.equal(s.size, 21);
    const fetched = () => s.state.get(StoreState.ROWS_FETCHED);
    assert.equal(fetched(), 21, 'the first load fetched every row once');
    const version = Number(pg.psql("SELECT version FROM txgate_accounts WHERE id = 'acme'"));
    const notes = s.state.get(StoreState.NOTIFICATIONS);
    pg.psql(
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
    pg.psql(`SELECT pg_notify('txgate_accounts', json_build_object('id', 'acme', 'version', 999999)::text)`);
    pg.psql("UPDATE txgate_accounts SET doc = doc WHERE id = 'acct3'");
    await eventually(() => fetched() === 23, 5_000);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(fetched(), 23);
    // A deleted row leaves the snapshot.
    pg.psql("DELETE FROM txgate_accounts WHERE id = 'acct4'");
    await eventually(() => s.size === 20, 5_000);
    s.close();
  });
});

describe('a large grant', () => {
  it('the documented maximum (100,000 tip addresses) is checked off the serving thread and served: matching and listing; one bad checksum among them refuses the row', async () => {
    pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    const tips = "(SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 100000) g)";
    pg.psql(
      `INSERT INTO txgate_accounts (id, doc) SELECT 'big', jsonb_build_object('id', 'big', 'keySha256', jsonb_build_array('${keySha256(k)}'), 'grants', jsonb_build_array(jsonb_build_object('chainId', 4663, 'rateLimit', '{"perSecond":1,"burst":1}'::jsonb, 'minTipWei', '0', 'tipAddresses', ${tips})))`,
    );
    const { store: s, lines } = store(60_000);
    try {
      await loaded(s, lines);
      const g = s.byKeyHash(keySha256(k))?.grants.get(4663);
      assert.ok(g !== undefined, JSON.stringify(lines()));
      assert.equal(g.tipAddresses.size, 100_000);
      const addr = (i: number) => '0x' + i.toString(16).padStart(40, '0');
      for (const i of [1, 2, 4096, 65_535, 99_999, 100_000]) assert.ok(g.tipAddresses.has(addr(i)), addr(i));
      for (const i of [0, 100_001, 1 << 20]) assert.ok(!g.tipAddresses.has(addr(i)), addr(i));
      assert.ok(!g.tipAddresses.has('0x'), 'a short string is not listed');
      const listed = g.tipAddresses.toArray();
      assert.equal(listed.length, 100_000);
      assert.equal(listed[0]!.toLowerCase(), addr(1), 'listed in order');
      assert.equal(listed[0], toChecksumAddress(addr(1)), 'checksummed');
      assert.equal(listed[99_999], toChecksumAddress(addr(100_000)));
      // One address among them with a wrong EIP-55 checksum: the row is refused, naming it.
      pg.psql(
        `UPDATE txgate_accounts SET doc = jsonb_set(doc, '{grants,0,tipAddresses,77777}', '"0xA0ee7a142d267C1f36714E4a8F75612F20a79720"') WHERE id = 'big'`,
      );
      await eventually(() => s.byKeyHash(keySha256(k)) === undefined, 10_000);
      assert.ok(lines().some((l) => l.account === 'big' && /tipAddresses\[77777\]: bad EIP-55 checksum/.test(String(l.msg))));
    } finally {
      await closeAll();
    }
  });
});

/** Edge backends: those whose application_name the store sets. */
const backends = () => Number(pg.psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'txgate'"));

describe('a large grant over HTTP', () => {
  it('GET /tip-addresses on an edge with two threads lists the 100,000 addresses in order, checksummed; 304 on its ETag; a new list, a new ETag', async () => {
    pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    const tips = "(SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 100000) g)";
    pg.psql(
      `INSERT INTO txgate_accounts (id, doc) SELECT 'big', jsonb_build_object('id', 'big', 'keySha256', jsonb_build_array('${keySha256(k)}'), 'grants', jsonb_build_array(jsonb_build_object('chainId', 4663, 'rateLimit', '{"perSecond":1,"burst":1}'::jsonb, 'minTipWei', '0', 'tipAddresses', ${tips})))`,
    );
    const gate = await startGate({ accounts: null, config: { workers: 2, accounts: { store: 'postgres', url: pg.url(), maxStaleMs: 30_000 } } });
    try {
      const get = (etag?: string) =>
        send({ port: gate.port, method: 'GET', path: '/tip-addresses', headers: { 'x-api-key': k, ...(etag !== undefined ? { 'if-none-match': etag } : {}) } });
      const addr = (i: number) => '0x' + i.toString(16).padStart(40, '0');
      // A new connection each time: the answers may come from either thread (each adopted the shared bytes).
      let etag = '';
      for (let i = 0; i < 4; i++) {
        const r = await get();
        assert.equal(r.status, 200, r.text.slice(0, 400));
        const listed = r.json.tipAddresses as string[];
        assert.equal(listed.length, 100_000);
        assert.equal(listed[0], toChecksumAddress(addr(1)));
        assert.equal(listed[54_320], toChecksumAddress(addr(54_321)), 'in the listed order');
        assert.equal(r.json.chainId, '0x1237');
        assert.equal(r.json.minTipWei, '0');
        const e = String(r.headers.etag);
        if (etag !== '') assert.equal(e, etag, 'one ETag for one list, on every thread');
        etag = e;
      }
      assert.equal((await get(etag)).status, 304);
      pg.psql(`UPDATE txgate_accounts SET doc = jsonb_set(doc, '{grants,0,tipAddresses,0}', '"0x00000000000000000000000000000000000f4242"') WHERE id = 'big'`);
      await eventually(async () => (await get(etag)).status === 200, 10_000);
      const r = await get();
      assert.notEqual(String(r.headers.etag), etag, 'a new list, a new ETag');
      assert.equal((r.json.tipAddresses as string[])[0], toChecksumAddress('0x00000000000000000000000000000000000f4242'));
    } finally {
      await gate.stop();
    }
  });
});

describe('locks and silence', () => {
  it('a table locked for 12 s while changes are notified costs a fixed number of backends (the server cancels what the edge abandons)', async () => {
    pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    put(doc('acme', [k]));
    await closeAll();
    const { store: s, lines } = store(500);
    await loaded(s);
    const lock = pg.psqlBackground('BEGIN; LOCK TABLE txgate_accounts IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(12); COMMIT;');
    let most = 0;
    const t0 = performance.now();
    let v = 100;
    while (performance.now() - t0 < 11_000) {
      pg.psql(`SELECT pg_notify('txgate_accounts', json_build_object('id', 'acme', 'version', ${v++})::text)`);
      most = Math.max(most, backends());
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(await lock.done, 0);
    process.stdout.write(`# backends of one edge with the table locked 12 s: at most ${most}\n`);
    assert.ok(most <= 3, `at most the pool's 2 and the listener: ${most}; log:\n${JSON.stringify(lines().filter((l) => l.level !== 20))}`);
    assert.ok(s.state.get(StoreState.FAILURES) > 0, 'the loads behind the lock failed (cancelled)');
    put(doc('acme', [newKey()]));
    await eventually(() => s.byKeyHash(keySha256(k)) === undefined, 5_000);
    await closeAll();
  });

  it('a frozen listener (its backend stopped, after repeated reconnects) is noticed by the heartbeat: a revocation made meanwhile arrives within ~3 s whatever resyncMs is', async () => {
    pg.psql('DELETE FROM txgate_accounts');
    await closeAll();
    const { store: s, lines } = store(60_000);
    put(doc('acme', [newKey()]));
    await loaded(s);
    const frozen: number[] = [];
    const seen: number[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        const k = newKey();
        put(doc('acme', [k]));
        await eventually(() => s.byKeyHash(keySha256(k))?.id === 'acme', 5_000);
        const pid = await eventually(() => {
          const out = pg.psql("SELECT pid FROM pg_stat_activity WHERE application_name = 'txgate' AND query ILIKE 'listen%'").trim().split('\n').map(Number);
          return out.find((p) => p > 0 && !seen.includes(p));
        }, 5_000);
        pg.signal(pid!, 'STOP');
        frozen.push(pid!);
        seen.push(pid!);
        await new Promise((r) => setTimeout(r, 500));
        const t0 = performance.now();
        put(doc('acme', [newKey()])); // revokes k
        await eventually(() => s.byKeyHash(keySha256(k)) === undefined, 8_000);
        process.stdout.write(
          `# round ${round + 1}: revocation with the listener frozen took effect in ${(performance.now() - t0).toFixed(0)} ms (resyncMs 60 s)\n`,
        );
        pg.signal(pid!, 'CONT');
        frozen.pop();
      }
      assert.ok(lines().filter((l) => String(l.why ?? '').includes('has not delivered a heartbeat')).length >= 3);
    } finally {
      for (const p of frozen) pg.signal(p, 'CONT');
      await closeAll();
    }
  });
});

describe('the public port', () => {
  /** A TCP forwarder to PostgreSQL on a fixed port, started late (the database "comes up"). */
  async function lateLink(port: number): Promise<Server> {
    const server = createServer((c) => {
      const up = connect(pg.port, '127.0.0.1');
      c.pipe(up).pipe(c);
      for (const s of [c, up]) s.on('error', () => {});
      up.on('close', () => c.destroy());
      c.on('close', () => up.destroy());
    });
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    return server;
  }

  for (const workers of [1, 2])
    it(`opens only after the first accounts load (${workers} thread${workers > 1 ? 's' : ''})`, async () => {
      pg.psql('DELETE FROM txgate_accounts');
      const k = newKey();
      put(doc('acme', [k]));
      const dbPort = await freePort();
      let gate: Gate | null = null;
      let settled = false;
      const starting = startGate({
        internal: true,
        accounts: null,
        config: { workers, accounts: { store: 'postgres', url: `postgres://postgres@127.0.0.1:${dbPort}/txgate`, maxStaleMs: 30_000 } },
      }).then((g) => {
        settled = true;
        gate = g;
        return g;
      });
      await new Promise((r) => setTimeout(r, 2_000));
      assert.equal(settled, false, 'not started while the accounts cannot be loaded');
      const link = await lateLink(dbPort);
      try {
        const g = await starting;
        // The first request after the port opened meets the accounts: ready, and the key known.
        const ready = await send({ port: g.port, method: 'GET', path: '/ready' });
        assert.ok(!((ready.json.notReady as string[] | undefined) ?? []).some((p) => p.startsWith('accounts')), ready.text);
        const tips = await send({ port: g.port, method: 'GET', path: '/tip-addresses', headers: { 'x-api-key': k } });
        assert.equal(tips.status, 200, tips.text);
      } finally {
        await (gate as Gate | null)?.stop();
        link.close();
      }
    });
});
