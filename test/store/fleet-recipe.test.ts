/**
 * The fleet recipe of docs/operations.md, run as written against a real PostgreSQL (the roles, the database,
 * `migrate --edge-role`, an account, an edge configured with the recipe's edge URL), and what
 * an edge tells about its store: permission denied apart from unreachable (log and /ready),
 * picked up within about a second once granted, and a lost database noticed at once (not at
 * the next resync).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { initCrypto } from '../../src/base/native.js';
import { eventually, issuedKeys, startGate, type Gate } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { TestPostgres } from '../../src/dev/postgres.js';
import { StubSequencer } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';

keysNeverLogged();

const root = join(import.meta.dirname, '..', '..', '..');
const CLI = join(root, 'dist', 'scripts', 'accounts.js');

/** The recipe's parts, read from docs/operations.md. */
function recipe() {
  const readme = readFileSync(join(root, 'docs', 'operations.md'), 'utf8');
  const at = readme.indexOf('Setting it up (Debian 12');
  assert.ok(at > 0, 'docs/operations.md has the fleet recipe');
  const sh = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))![1]!;
  const sql = /<<'SQL'\n([\s\S]*?)\nSQL\n/.exec(sh)![1]!;
  const adminUrl = /export TXGATE_ACCOUNTS_DB='([^']+)'/.exec(sh)![1]!;
  const commands = sh
    .split('\n')
    .filter((l) => l.startsWith('npm run accounts -- '))
    .map((l) =>
      l
        .replace(/\s+#.*$/, '')
        .slice('npm run accounts -- '.length)
        .trim()
        .split(/\s+/),
    );
  const json = /```json\n([\s\S]*?)```/.exec(readme.slice(at))![1]!;
  // The edge's config: a whole file (examples/fleet.json) or its "accounts" field alone.
  const edge = (JSON.parse(json.trim().startsWith('{') ? json : `{${json}}`) as { accounts: { store: string; url: string; maxStaleMs: number } }).accounts;
  return { sql, adminUrl, commands, edge };
}

let pg: TestPostgres;
let stub: StubSequencer;
const gates: Gate[] = [];

before(async () => {
  await initCrypto();
  pg = await TestPostgres.start();
  pg.psql('DROP DATABASE txgate', 'postgres'); // the recipe creates it
  stub = await new StubSequencer().start();
});
after(async () => {
  for (const g of gates) await g.stop();
  await stub.stop();
  await pg.destroy();
});

/** The recipe's URLs point at 127.0.0.1:5432 and db.internal:5432: here, the test server's port. */
const here = (url: string) => url.replace(/@(127\.0\.0\.1|db\.internal):5432\//, `@127.0.0.1:${pg.port}/`);

async function cli(args: string[], url: string) {
  try {
    const r = await promisify(execFile)(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, TXGATE_ACCOUNTS_DB: url } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: x.code ?? 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

async function edge(url: string, extra: Record<string, unknown> = {}): Promise<Gate> {
  const g = await startGate({ sequencers: [stub.url], accounts: null, config: { accounts: { store: 'postgres', url, maxStaleMs: 120_000, ...extra } } });
  gates.push(g);
  return g;
}

describe('the fleet recipe of docs/operations.md, as written', () => {
  let key = '';
  it('roles and database, migrate --edge-role, an account; an edge with the recipe URL serves it', async () => {
    const r = recipe();
    assert.equal(r.edge.store, 'postgres');
    pg.psqlScript(r.sql + '\n', 'postgres');
    for (const args of r.commands) {
      const out = await cli(args, here(r.adminUrl));
      assert.equal(out.code, 0, `npm run accounts -- ${args.join(' ')}\n${out.stderr}`);
      const m = /(txg_[A-Za-z0-9_-]{43})/.exec(out.stdout);
      if (m !== null) {
        key = m[1]!;
        issuedKeys.push(key);
      }
    }
    assert.notEqual(key, '', 'the create step printed a key');
    const g = await edge(here(r.edge.url));
    await eventually(async () => (await send({ port: g.port, method: 'GET', path: '/ready' })).status === 200, 5_000);
    const tips = await send({ port: g.port, method: 'GET', path: '/tip-addresses', headers: { 'x-api-key': key } });
    assert.equal(tips.status, 200, tips.text);
    const sub = await rpc(g.port, 'eth_sendRawTransaction', [await sign1559()], { key });
    assert.notEqual(sub.status, 401, 'the account created with the CLI authenticates on the edge');
    // The edge's role reads, and cannot write.
    assert.throws(() => pg.psql("SET ROLE txgate_edge; DELETE FROM txgate_accounts WHERE id = 'acme'"), /permission denied/);
  });
});

describe('what an edge says about its store', () => {
  it('permission denied is told apart from unreachable (log and /ready), and a grant is picked up within ~1 s', async () => {
    pg.psql("CREATE ROLE edge_without_grant LOGIN PASSWORD 'x'");
    const g = await edge(`postgres://edge_without_grant:x@127.0.0.1:${pg.port}/txgate`);
    const ready = (await eventually(async () => {
      const r = await send({ port: g.port, method: 'GET', path: '/ready' });
      return (r.json.notReady as string[]).some((p) => p.startsWith('accounts not loaded: ')) ? r : null;
    }))!;
    assert.equal(ready.status, 503);
    assert.ok(
      (ready.json.notReady as string[]).some((p) => p.startsWith('accounts not loaded: permission denied')),
      JSON.stringify(ready.json),
    );
    const line = g.logs.map((l) => JSON.parse(l)).find((l) => typeof l.msg === 'string' && l.msg.includes('account store'));
    assert.match(line.msg, /refused this edge \(permission denied/);
    assert.doesNotMatch(line.msg, /unreachable/);
    pg.psql('GRANT SELECT ON txgate_accounts TO edge_without_grant');
    // Retried about every second (the resync is 30 s): ready well before it.
    await eventually(async () => (await send({ port: g.port, method: 'GET', path: '/ready' })).status === 200, 5_000);
  });
  it('a lost database is noticed at once (a closed connection triggers a read), not at the next 30-s resync', async () => {
    const g = await edge(`postgres://postgres@127.0.0.1:${pg.port}/txgate`);
    await eventually(async () => (await send({ port: g.port, method: 'GET', path: '/ready' })).status === 200, 5_000);
    const from = g.logs.length;
    pg.stopServer();
    try {
      await eventually(() => g.logs.slice(from).some((l) => JSON.parse(l).msg?.startsWith('account store unreachable')), 5_000);
      // A missing server is "unreachable", never "refused".
      assert.ok(!g.logs.slice(from).some((l) => /refused this edge/.test(JSON.parse(l).msg ?? '')));
    } finally {
      pg.startServer();
    }
    await eventually(() => g.logs.slice(from).some((l) => JSON.parse(l).msg === 'accounts loaded from the database'), 5_000);
  });
});
