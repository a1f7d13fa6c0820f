/**
 * A fleet of edges over one PostgreSQL account store (a real server started by the test): the
 * migrations, the onboarding CLI on the database, and two txgate processes (one with two worker
 * threads) sharing it: a key created on the database is accepted by both, a revoked one refused
 * by both within a second; PostgreSQL stopped: both keep serving, then 503 credentials_stale
 * after maxStaleMs; back: both recover by themselves; a change made while they were cut off
 * reaches them on reconnect; an invalid row written by hand is refused and logged, the rest
 * stay in force.
 */
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { createServer, connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { Writable } from 'node:stream';
import { PostgresAccountStore } from '../../src/accounts/postgres/store.js';
import { StoreState } from '../../src/accounts/postgres/state.js';
import { createLogger } from '../../src/log/log.js';
import { initCrypto } from '../../src/base/native.js';
import { eventually, issuedKeys, TIP } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { TestPostgres } from '../../src/dev/postgres.js';
import { StubSequencer } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { startCli, writeCliConfig } from '../support/processes.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { CuttableLink } from '../support/cuttable-link.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const CLI = join(import.meta.dirname, '../../scripts/accounts.js');
const MAX_STALE_MS = 2_000;
let pg: TestPostgres;
let link: CuttableLink;
let stub: StubSequencer;
const edges: Edge[] = [];
let nonce = 1000;

interface Edge {
  proc: ChildProcess;
  port: number;
  out: () => string;
}

async function accounts(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = promisify(execFile)(process.execPath, [CLI, ...args, '--db', pg.url()], { encoding: 'utf8' });
  if (input !== undefined) {
    p.child.stdin!.end(input);
  }
  try {
    const r = await p;
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

const keyOf = (out: string): string => {
  const m = /(txg_[A-Za-z0-9_-]{43})/.exec(out);
  assert.ok(m, out);
  issuedKeys.push(m[1]!);
  return m[1]!;
};
/** Account `id` created on the database (rate and burst 1000, tips required): its key. */
const createdKey = async (id: string): Promise<string> =>
  keyOf(
    (await accounts(['create', '--id', id, '--chain', String(DEV_CHAIN_ID), '--rate', '1000', '--burst', '1000', '--tip', TIP, '--min-tip', '1000000000000']))
      .stdout,
  );

async function startEdge(workers: number): Promise<Edge> {
  const dir = tempDir('txgate-edge-');
  const g = await startCli(
    writeCliConfig(dir, {
      workers,
      chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [stub.url] }],
      websocket: { enabled: true },
      accounts: { store: 'postgres', url: `postgres://postgres@127.0.0.1:${link.port}/txgate`, maxStaleMs: MAX_STALE_MS, resyncMs: 500 },
    }),
  );
  const e: Edge = { proc: g.proc, port: g.port, out: g.out };
  g.proc.once('exit', (code, signal) => {
    if (!stopping) exited.push(`the edge on port ${g.port} exited (${code ?? signal}); its last output:\n${g.out().slice(-6000)}`);
  });
  edges.push(e);
  return e;
}

/** Edges that ended before the suite did (each test checks there are none). */
const exited: string[] = [];
let stopping = false;

const submit = (e: Edge, key: string) => rpc(e.port, 'eth_sendRawTransaction', [sign1559Sync()], { key });
let pending: string[] = [];
/** Distinct signed transactions, made ahead (signing is async). */
async function prepare(n: number): Promise<void> {
  pending = await Promise.all(Array.from({ length: n }, () => sign1559({ nonce: nonce++ })));
}
let next = 0;
/** The pool in turn (a repeat is answered like a new one: the stub accepts it again, or txgate from its accepted window). */
function sign1559Sync(): string {
  return pending[next++ % pending.length]!;
}
const statuses = async (key: string) => Promise.all(edges.map(async (e) => (await submit(e, key)).status));
const reasons = async (key: string) => Promise.all(edges.map(async (e) => (await submit(e, key)).json?.error?.data?.reason ?? 'ok'));

before(async () => {
  await initCrypto();
  pg = await TestPostgres.start();
  link = await new CuttableLink(pg.port).start();
  stub = await new StubSequencer().start();
  await prepare(64);
});
after(async () => {
  stopping = true;
  for (const e of edges) if (e.proc.exitCode === null) e.proc.kill('SIGKILL');
  link?.close();
  await stub?.stop();
  await pg?.destroy();
});

describe('the database account store', () => {
  afterEach(() => assert.deepEqual(exited, [], exited.join('\n')));

  it('migrate applies the schema once; running it again changes nothing', async () => {
    const first = await accounts(['migrate']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /applied 001_accounts/);
    const again = await accounts(['migrate']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /up to date/);
    assert.equal(pg.psql('SELECT count(*) FROM txgate_migrations'), '2\n');
    assert.match(first.stdout, /002_limits_and_keys/);
  });

  it('the onboarding CLI works on the database as on the file: validated, one transaction, keys stored only as SHA-256', async () => {
    const created = await accounts([
      'create',
      '--id',
      'acme',
      '--chain',
      String(DEV_CHAIN_ID),
      '--rate',
      '1000',
      '--burst',
      '1000',
      '--tip',
      TIP,
      '--min-tip',
      '1000000000000',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const key = keyOf(created.stdout);
    assert.ok(!pg.psql('SELECT doc::text FROM txgate_accounts').includes(key), 'the key itself is never stored');
    assert.match((await accounts(['list'])).stdout, /^acme\tenabled\tkeys [0-9a-f]{12}\tchains 4663$/m);
    const bad = await accounts(['grant-add', '--id', 'acme', '--chain', '10', '--rate', '5', '--burst', '5', '--tip', '0x1234', '--min-tip', '1']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /tipAddresses\[0\]/);
    assert.equal(pg.psql("SELECT version FROM txgate_accounts WHERE id = 'acme'"), '1\n', 'a refused change writes nothing');
    // grant-set changes the named field alone, in the row (grant-add on the same chain names it).
    const again = await accounts(['grant-add', '--id', 'acme', '--chain', String(DEV_CHAIN_ID), '--rate', '5', '--burst', '5', '--tip', TIP, '--min-tip', '1']);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /grant-set --id acme --chain 4663/);
    const docBefore = JSON.parse(pg.psql("SELECT doc::text FROM txgate_accounts WHERE id = 'acme'"));
    const set = await accounts(['grant-set', '--id', 'acme', '--chain', String(DEV_CHAIN_ID), '--conditional', '--burst', '2000']);
    assert.equal(set.code, 0, set.stderr);
    const docAfter = JSON.parse(pg.psql("SELECT doc::text FROM txgate_accounts WHERE id = 'acme'"));
    docBefore.grants[0].conditional = true;
    docBefore.grants[0].rateLimit.burst = 2000;
    assert.deepEqual(docAfter, docBefore);
    assert.equal(pg.psql("SELECT version FROM txgate_accounts WHERE id = 'acme'"), '2\n', 'one change, one version');
    assert.equal((await accounts(['disable', '--id', 'acme'])).code, 0);
    assert.match((await accounts(['list'])).stdout, /acme\tDISABLED/);
    assert.equal((await accounts(['enable', '--id', 'acme'])).code, 0);
    const dup = await accounts(['create', '--id', 'acme', '--chain', String(DEV_CHAIN_ID), '--rate', '1', '--burst', '1', '--tip', TIP, '--min-tip', '1']);
    assert.match(dup.stderr, /already exists/);
  });

  it('two edges (one with two threads): a key created on the database is accepted by both; revoked, it is refused by both within 1 s', async () => {
    await startEdge(1);
    await startEdge(2);
    for (const e of edges) await eventually(async () => (await send({ port: e.port, method: 'GET', path: '/ready' })).status === 200, 10_000);
    const key = await createdKey('mm');
    await eventually(async () => (await statuses(key)).every((s) => s === 200), 2_000);
    const t0 = performance.now();
    const revoked = await accounts(['revoke-key', '--id', 'mm', '--key-stdin'], key);
    assert.equal(revoked.code, 0, revoked.stderr);
    await eventually(async () => (await statuses(key)).every((s) => s === 401), 1_000);
    const ms = performance.now() - t0;
    process.stdout.write(`# revocation reached both edges in ${ms.toFixed(0)} ms (CLI start-up included)\n`);
  });

  it('a key revoked on the database closes its open WebSocket connections on both edges (4001) within 1 s', async () => {
    const key = await createdKey('ws-mm');
    await eventually(async () => (await statuses(key)).every((s) => s === 200), 2_000);
    // Two connections per edge: on the two-thread edge they may land on either thread.
    const socks = await Promise.all(
      edges.flatMap((e) =>
        [0, 1].map(
          () =>
            new Promise<WebSocket>((resolve, reject) => {
              const ws = new WebSocket(`ws://127.0.0.1:${e.port}/`, { headers: { host: 'localhost', 'x-api-key': key } });
              ws.once('open', () => resolve(ws));
              ws.once('error', reject);
            }),
        ),
      ),
    );
    const closed = socks.map((ws) => new Promise<number>((r) => ws.once('close', (code) => r(code))));
    const chainIds = await Promise.all(
      socks.map(
        (ws) =>
          new Promise<string>((r) => {
            ws.once('message', (d) => r(JSON.parse(d.toString()).result));
            ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
          }),
      ),
    );
    assert.deepEqual(
      chainIds,
      socks.map(() => '0x1237'),
    );
    const revoked = await accounts(['revoke-key', '--id', 'ws-mm', '--key-stdin'], key);
    assert.equal(revoked.code, 0, revoked.stderr);
    const t0 = performance.now();
    const codes = await Promise.race([Promise.all(closed), new Promise<null>((r) => setTimeout(() => r(null), 1_000))]);
    assert.deepEqual(
      codes,
      socks.map(() => 4001),
      'every connection closed with 4001 within 1 s of the revocation',
    );
    process.stdout.write(`# revoked key's WebSocket connections closed on both edges in ${(performance.now() - t0).toFixed(0)} ms\n`);
  });

  it('an invalid row written by hand is refused and logged; the other accounts stay in force', async () => {
    const key = await createdKey('handmade');
    const acme = keyOf((await accounts(['rotate-key', '--id', 'acme'])).stdout);
    await eventually(async () => (await statuses(key)).every((s) => s === 200), 2_000);
    pg.psql(`UPDATE txgate_accounts SET doc = jsonb_set(doc, '{grants,0,tipAddresses}', '["0xnot-an-address"]') WHERE id = 'handmade'`);
    await eventually(() => edges.every((e) => e.out().includes('account row refused')), 2_000);
    const line = edges[0]!
      .out()
      .split('\n')
      .find((l) => l.includes('account row refused'))!;
    assert.equal(JSON.parse(line).account, 'handmade');
    assert.deepEqual(await statuses(acme), [200, 200], 'the other accounts are still served');
    assert.deepEqual(await statuses(key), [401, 401], 'the refused row is not served');
    // The CLI still works beside it.
    assert.equal((await accounts(['disable', '--id', 'acme'])).code, 0);
    assert.equal((await accounts(['enable', '--id', 'acme'])).code, 0);
  });

  it('PostgreSQL stopped: both keep serving, then 503 credentials_stale after maxStaleMs (eth_chainId still answers); back: both recover by themselves', async () => {
    const acme = keyOf((await accounts(['rotate-key', '--id', 'acme'])).stdout);
    await eventually(async () => (await statuses(acme)).every((s) => s === 200), 2_000);
    pg.stopServer();
    const stoppedAt = performance.now();
    assert.deepEqual(await statuses(acme), [200, 200], 'served from the snapshot');
    await eventually(async () => (await reasons(acme)).every((r) => r === 'credentials_stale'), MAX_STALE_MS + 3_000);
    assert.ok(performance.now() - stoppedAt >= MAX_STALE_MS - 600, 'not before maxStaleMs (less one resync period)');
    for (const e of edges) {
      const r = await submit(e, acme);
      assert.equal(r.status, 503);
      const ready = await send({ port: e.port, method: 'GET', path: '/ready' });
      assert.equal(ready.status, 503);
      assert.match(ready.text, /accounts stale/);
      assert.equal((await rpc(e.port, 'eth_chainId', [])).json.result, '0x1237');
      const tips = await send({ port: e.port, method: 'GET', path: '/tip-addresses', headers: { 'x-api-key': acme } });
      assert.equal(tips.status, 503);
    }
    const marks = edges.map((e) => e.out().length);
    pg.startServer();
    await eventually(async () => (await statuses(acme)).every((s) => s === 200), 10_000).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; edge logs since the restart:\n${edges.map((e, i) => e.out().slice(marks[i])).join('\n---\n')}`);
    });
    for (const e of edges) assert.equal((await send({ port: e.port, method: 'GET', path: '/ready' })).status, 200);
  });

  it('a connection terminated at its first query (as in a restart) is retried, and nothing escapes as an unhandled rejection', async () => {
    // Each of the first connections through this proxy gets, for the first query it sends after
    // the start-up exchange, the error a server shutting down sends (57P01), and is closed. The
    // postgres client's own catalog query, when it ran one there, rejected with nobody to catch
    // it, and that ended the process.
    const field = (t: string, v: string) => Buffer.concat([Buffer.from(t), Buffer.from(v), Buffer.from([0])]);
    const fields = Buffer.concat([
      field('S', 'FATAL'),
      field('V', 'FATAL'),
      field('C', '57P01'),
      field('M', 'terminating connection due to administrator command'),
      Buffer.from([0]),
    ]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(fields.length + 4);
    const terminating = Buffer.concat([Buffer.from('E'), len, fields]);
    let cuts = 0;
    const proxy = createServer((c) => {
      const up = connect(pg.port, '127.0.0.1');
      let chunks = 0;
      c.on('data', (d: Buffer) => {
        if (++chunks === 2 && cuts < 4) {
          cuts++;
          up.destroy();
          c.end(terminating);
          return;
        }
        up.write(d);
      });
      up.pipe(c);
      for (const s of [c, up]) s.on('error', () => {});
      up.on('close', () => c.destroy());
      c.on('close', () => up.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    const log = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
    const store = new PostgresAccountStore({
      url: `postgres://postgres@127.0.0.1:${(proxy.address() as AddressInfo).port}/txgate`,
      maxStaleMs: 5_000,
      resyncMs: 200,
      log,
    });
    try {
      await store.start();
      await eventually(() => store.ready, 10_000);
      await new Promise((r) => setTimeout(r, 300)); // a rejection surfaces a tick later
      assert.equal(cuts, 4, 'the proxy cut connections');
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      store.close();
      proxy.close();
    }
  });

  it('after PostgreSQL restarts, a store is fresh again within seconds (reconnects are at most ~1 s apart) and listens again (a change arrives as a notification)', async () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'debug', destination: new Writable({ write: (c: Buffer, _e, cb) => (lines.push(c.toString()), cb()) }) });
    const store = new PostgresAccountStore({ url: pg.url(), maxStaleMs: 1_000, resyncMs: 300, log });
    try {
      await store.start();
      await eventually(() => store.ready && !store.stale, 5_000);
      pg.stopServer();
      // Down long enough for many failed reconnects (the client library's own backoff would
      // have grown to several seconds by now).
      await eventually(() => store.stale, 5_000);
      await new Promise((r) => setTimeout(r, 2_000));
      pg.startServer();
      const t0 = performance.now();
      await eventually(() => !store.stale, 5_000);
      process.stdout.write(`# fresh again ${(performance.now() - t0).toFixed(0)} ms after PostgreSQL was back (resync every 300 ms)\n`);
      const notified = store.state.get(StoreState.NOTIFICATIONS);
      await eventually(() => {
        pg.psql("UPDATE txgate_accounts SET doc = doc WHERE id = 'acme'");
        return store.state.get(StoreState.NOTIFICATIONS) > notified;
      }, 5_000).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}: no notification since the restart; store log:\n${lines.join('')}`);
      });
    } finally {
      store.close();
    }
  });

  it('a change made while the edges were cut off reaches them when they reconnect (LISTEN, then a full reload)', async () => {
    const acme = keyOf((await accounts(['rotate-key', '--id', 'acme'])).stdout);
    await eventually(async () => (await statuses(acme)).every((s) => s === 200), 2_000);
    link.sever(); // the edges lose the database; the CLI still reaches it directly
    const revoked = await accounts(['revoke-key', '--id', 'acme', '--key-stdin'], acme);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.deepEqual(await statuses(acme), [200, 200], 'cut off: the notification never reached them');
    link.restore();
    // Within a reconnect and a reload: the listener retries every second, the resync every 500 ms
    // (a query cut mid-flight is given up after 5 s).
    const marks = edges.map((e) => e.out().length);
    await eventually(async () => (await statuses(acme)).every((s) => s === 401), 10_000).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; edge logs since the cut:\n${edges.map((e, i) => e.out().slice(marks[i])).join('\n---\n')}`);
    });
  });

  it('connections that neither answer nor fail (a hung server, a moved address): the edges drop them, reconnect, and a change made meanwhile reaches them', async () => {
    const acme = keyOf((await accounts(['rotate-key', '--id', 'acme'])).stdout);
    await eventually(async () => (await statuses(acme)).every((s) => s === 200), 2_000);
    const marks = edges.map((e) => e.out().length);
    link.freeze(); // every connection the edges hold now carries nothing; new ones get through
    const revoked = await accounts(['revoke-key', '--id', 'acme', '--key-stdin'], acme);
    assert.equal(revoked.code, 0, revoked.stderr);
    // A load without an answer for 5 s drops the connections; the next resync or LISTEN reloads.
    await eventually(async () => (await statuses(acme)).every((s) => s === 401), 15_000).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; edge logs since the freeze:\n${edges.map((e, i) => e.out().slice(marks[i])).join('\n---\n')}`);
    });
    for (const e of edges) await eventually(async () => (await send({ port: e.port, method: 'GET', path: '/ready' })).status === 200, 5_000);
  });
});
