/**
 * The fleet store under load and silence, on a real PostgreSQL: the documented largest grant
 * (100,000 tip addresses) checked off the serving thread and listed over HTTP, a locked table
 * costing a fixed number of backends, a frozen listener noticed by its heartbeat, and an edge's
 * public port opening only after its first load. Hostile rows: fleet-rows.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer, connect, type Server } from 'node:net';
import { describe, it } from 'node:test';
import { toChecksumAddress } from '@ethereumjs/util';
import { keySha256 } from '../../src/accounts/keys.js';
import { StoreState } from '../../src/accounts/postgres/state.js';
import { eventually, newKey, startGate, type Gate } from '../support/harness.js';
import { send } from '../support/http.js';
import { freePort } from '../../src/base/free-port.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { useFleetDb } from '../support/fleet-db.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const db = useFleetDb();
const { doc, put, store, loaded, closeAll, backends } = db;

describe('a large grant', () => {
  it('the documented maximum (100,000 tip addresses) is checked off the serving thread and served: matching and listing; one bad checksum among them refuses the row', async () => {
    db.pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    const tips = "(SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 100000) g)";
    db.pg.psql(
      `INSERT INTO txgate_accounts (id, doc) SELECT 'big', jsonb_build_object('id', 'big', 'keySha256', jsonb_build_array('${keySha256(k)}'), 'grants', jsonb_build_array(jsonb_build_object('chainId', ${DEV_CHAIN_ID}, 'rateLimit', '{"perSecond":1,"burst":1}'::jsonb, 'minTipWei', '0', 'tipAddresses', ${tips})))`,
    );
    const { store: s, lines } = store(60_000);
    try {
      await loaded(s, lines);
      const g = s.byKeyHash(keySha256(k))?.grants.get(DEV_CHAIN_ID);
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
      db.pg.psql(
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

describe('a large grant over HTTP', () => {
  it('GET /tip-addresses on an edge with two threads lists the 100,000 addresses in order, checksummed; 304 on its ETag; a new list, a new ETag', async () => {
    db.pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    const tips = "(SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 100000) g)";
    db.pg.psql(
      `INSERT INTO txgate_accounts (id, doc) SELECT 'big', jsonb_build_object('id', 'big', 'keySha256', jsonb_build_array('${keySha256(k)}'), 'grants', jsonb_build_array(jsonb_build_object('chainId', ${DEV_CHAIN_ID}, 'rateLimit', '{"perSecond":1,"burst":1}'::jsonb, 'minTipWei', '0', 'tipAddresses', ${tips})))`,
    );
    const gate = await startGate({ accounts: null, config: { workers: 2, accounts: { store: 'postgres', url: db.pg.url(), maxStaleMs: 30_000 } } });
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
      db.pg.psql(
        `UPDATE txgate_accounts SET doc = jsonb_set(doc, '{grants,0,tipAddresses,0}', '"0x00000000000000000000000000000000000f4242"') WHERE id = 'big'`,
      );
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
    db.pg.psql('DELETE FROM txgate_accounts');
    const k = newKey();
    put(doc('acme', [k]));
    await closeAll();
    const { store: s, lines } = store(500);
    await loaded(s);
    const lock = db.pg.psqlBackground('BEGIN; LOCK TABLE txgate_accounts IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(12); COMMIT;');
    let most = 0;
    const t0 = performance.now();
    let v = 100;
    while (performance.now() - t0 < 11_000) {
      db.pg.psql(`SELECT pg_notify('txgate_accounts', json_build_object('id', 'acme', 'version', ${v++})::text)`);
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
    db.pg.psql('DELETE FROM txgate_accounts');
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
          const out = db.pg.psql("SELECT pid FROM pg_stat_activity WHERE application_name = 'txgate' AND query ILIKE 'listen%'").trim().split('\n').map(Number);
          return out.find((p) => p > 0 && !seen.includes(p));
        }, 5_000);
        db.pg.signal(pid!, 'STOP');
        frozen.push(pid!);
        seen.push(pid!);
        await new Promise((r) => setTimeout(r, 500));
        const t0 = performance.now();
        put(doc('acme', [newKey()])); // revokes k
        await eventually(() => s.byKeyHash(keySha256(k)) === undefined, 8_000);
        process.stdout.write(
          `# round ${round + 1}: revocation with the listener frozen took effect in ${(performance.now() - t0).toFixed(0)} ms (resyncMs 60 s)\n`,
        );
        db.pg.signal(pid!, 'CONT');
        frozen.pop();
      }
      assert.ok(lines().filter((l) => String(l.why ?? '').includes('has not delivered a heartbeat')).length >= 3);
    } finally {
      for (const p of frozen) db.pg.signal(p, 'CONT');
      await closeAll();
    }
  });
});

describe('the public port', () => {
  /** A TCP forwarder to PostgreSQL on a fixed port, started late (the database "comes up"). */
  async function lateLink(port: number): Promise<Server> {
    const server = createServer((c) => {
      const up = connect(db.pg.port, '127.0.0.1');
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
      db.pg.psql('DELETE FROM txgate_accounts');
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
