/**
 * Fail fast on what the operator can fix: at start, a missing or invalid accounts file, or an
 * accounts database that does not answer (unreachable, unknown role, no permission, no schema)
 * within accounts.startWaitMs, is one line on stderr naming the file or database and every
 * problem, exit 1, and no port opened. At run time a bad reload keeps the last good accounts and
 * says why on /ready (still 200) and in one log line.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import postgres from 'postgres';
import { migrate } from '../../src/accounts/postgres/migrate.js';
import { portFree } from '../../src/dev/preflight.js';
import { accountsDoc, eventually, type Gate, newKey, startGate } from '../support/harness.js';
import { send } from '../support/http.js';
import { TestPostgres } from '../../src/dev/postgres.js';
import { freePort } from '../../src/base/free-port.js';
import { runCli, startCli } from '../support/processes.js';
import { StubSequencer } from '../support/stub-sequencer.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { oneLine } from '../support/one-line.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const cli = join(import.meta.dirname, '../../src/cli.js');

/** A refusal's line: one, with no stack frame on it. */
const refusal = (stderr: string): string => oneLine(stderr, { trace: /\n\s+at / });

/** A config in a directory of its own (accounts file accounts.json beside it, written when given). */
function config(port: number, accounts: string | null, fields: Record<string, unknown> = {}): { file: string; dir: string } {
  const dir = tempDir('txgate-ff-');
  if (accounts !== null) writeFileSync(join(dir, 'accounts.json'), accounts);
  const file = join(dir, 'txgate.json');
  const chains = [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }];
  writeFileSync(file, JSON.stringify({ listen: { host: '127.0.0.1', port }, internal: { enabled: false }, workers: 2, chains, ...fields }));
  return { file, dir };
}

describe('a bad accounts file at start', () => {
  it('missing: one line naming the file and why, exit 1, the port never opened', async () => {
    const port = await freePort();
    const { file, dir } = config(port, null);
    const r = await runCli(file);
    assert.equal(r.code, 1);
    assert.equal(refusal(r.stderr), `txgate: accounts file ${join(dir, 'accounts.json')}: cannot be read (ENOENT); fix the file or accounts.file in ${file}`);
    assert.ok(await portFree('127.0.0.1', port));
    assert.doesNotMatch(r.stdout, /txgate listening/);
  });

  it('invalid: every problem in the one line, exit 1', async () => {
    const port = await freePort();
    const doc = accountsDoc([{ id: 'a', keys: [newKey()] }]) as { accounts: Record<string, unknown>[] };
    doc.accounts.push({ id: 'bad id!', keySha256: ['nothex'] });
    const { file, dir } = config(port, JSON.stringify(doc));
    const r = await runCli(file);
    assert.equal(r.code, 1);
    const line = refusal(r.stderr);
    assert.ok(line.startsWith(`txgate: accounts file ${join(dir, 'accounts.json')}: `), line);
    assert.match(line, /accounts\[1\]\.id: must be/);
    assert.match(line, /accounts\[1\]\.keySha256\[0\]: must be 64 hex/);
    assert.ok(await portFree('127.0.0.1', port));
  });

  it('not JSON: one line, exit 1', async () => {
    const { file } = config(await freePort(), '{ "accounts": [');
    const r = await runCli(file);
    assert.equal(r.code, 1);
    assert.match(refusal(r.stderr), /accounts\.json: not valid JSON/);
  });
});

describe('an accounts database that does not answer at start', () => {
  let pg: TestPostgres;
  before(async () => {
    pg = await TestPostgres.start();
    const sql = postgres(pg.url(), { max: 1, onnotice: () => {} });
    await migrate(sql);
    await sql.end();
    pg.psql('CREATE ROLE stranger LOGIN');
  });
  after(async () => {
    await pg.destroy();
  });

  const db = (url: string, startWaitMs: number) => ({ accounts: { store: 'postgres', url, startWaitMs } });

  it('unreachable: after accounts.startWaitMs, one line naming the database (never its password) and why, exit 1', async () => {
    const dead = await freePort();
    const port = await freePort();
    const { file } = config(port, null, db(`postgres://edge:s3cret-pw@127.0.0.1:${dead}/txgate`, 1500));
    const r = await runCli(file);
    assert.equal(r.code, 1);
    const line = refusal(r.stderr);
    assert.ok(line.startsWith(`txgate: accounts database postgres://edge@127.0.0.1:${dead}/txgate not usable within 1500 ms (accounts.startWaitMs): `), line);
    assert.match(line, /ECONNREFUSED/);
    assert.ok(!`${r.stderr}${r.stdout}`.includes('s3cret-pw'));
    assert.ok(await portFree('127.0.0.1', port));
  });

  it('an unknown role, a role without permission, a database without the schema: one line each naming why', async () => {
    for (const [url, why] of [
      [`postgres://nobody@127.0.0.1:${pg.port}/txgate`, /role "nobody" does not exist/],
      [`postgres://stranger@127.0.0.1:${pg.port}/txgate`, /permission denied for table txgate_accounts/],
      [pg.url('postgres'), /relation "txgate_accounts" does not exist/],
    ] as const) {
      const { file } = config(await freePort(), null, db(url, 0));
      const r = await runCli(file);
      assert.equal(r.code, 1, url);
      assert.match(refusal(r.stderr), why);
    }
  });

  it('a database that comes up within the wait: start-up waits for it and serves', async () => {
    pg.stopServer();
    const port = await freePort();
    const { file } = config(port, null, db(pg.url(), 60_000));
    const p = spawn(process.execPath, [cli, '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(p.exitCode, null, 'still waiting');
      pg.startServer();
      await eventually(() => out.includes('txgate listening'), 30_000);
    } finally {
      p.kill('SIGTERM');
      await new Promise((r) => p.once('exit', r));
    }
  });
});

describe('a bad reload at run time, with two worker threads', () => {
  it('one error line for the process (not one per thread); /ready says why on every thread', async () => {
    const stub = await new StubSequencer().start();
    const key = newKey();
    const { file, dir } = config(0, JSON.stringify(accountsDoc([{ id: 'mm', keys: [key] }])), {
      chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [stub.url] }],
    });
    const g = await startCli(file);
    try {
      await eventually(async () => (await send({ port: g.port, method: 'GET', path: '/ready' })).status === 200, 10_000);
      writeFileSync(join(dir, 'accounts.json'), '{ "accounts": 7 }');
      await eventually(async () => {
        for (let i = 0; i < 8; i++) if ((await send({ port: g.port, method: 'GET', path: '/ready' })).json.warnings === undefined) return false;
        return true;
      }, 5_000);
      await new Promise((r) => setTimeout(r, 1500)); // the watchers and the polls of both threads saw it
      const refusals = g
        .out()
        .split('\n')
        .filter((l) => l.includes('accounts file refused'))
        .map((l) => JSON.parse(l) as { level: string });
      assert.equal(refusals.filter((l) => l.level === 'error').length, 1, g.out());
      assert.equal((await send({ port: g.port, method: 'GET', path: '/ready' })).status, 200);
    } finally {
      g.proc.kill('SIGTERM');
      await new Promise((r) => g.proc.once('exit', r));
      await stub.stop();
    }
  });
});

describe('a bad reload at run time', () => {
  let gate: Gate;
  let stub: StubSequencer;
  const key = newKey();
  before(async () => {
    stub = await new StubSequencer().start();
    gate = await startGate({ accounts: [{ id: 'mm', keys: [key] }], sequencers: [stub.url] });
    await eventually(async () => (await send({ port: gate.port, method: 'GET', path: '/ready' })).status === 200, 5000);
  });
  after(async () => {
    await gate.stop();
    await stub.stop();
  });

  it('keeps the last good accounts, says why on /ready (still 200) and in one log line; a good file clears it', async () => {
    const ready = async () => {
      const r = await send({ port: gate.port, method: 'GET', path: '/ready' });
      return { status: r.status, json: r.json as { status: string; warnings?: string[] } };
    };
    const before = gate.logs.length;
    gate.writeAccounts('{ "accounts": [ { "id": "x" } ] }');
    const r = await eventually(async () => {
      const x = await ready();
      return x.json.warnings !== undefined ? x : null;
    }, 3000);
    assert.ok(r !== null);
    assert.equal(r.json.status, 'ready');
    assert.match(r.json.warnings![0]!, /^accounts file refused at .*accounts\[0\]\.keySha256: must be an array.*\(the last good accounts stay in force\)$/);
    assert.doesNotMatch(r.json.warnings![0]!, /\/tmp\//, 'no file path on the public port');
    await new Promise((res) => setTimeout(res, 1500)); // the watcher and the poll both saw it
    const lines = gate.logs.slice(before).filter((l) => l.includes('accounts file refused'));
    assert.equal(lines.length, 1, 'one log line');
    gate.writeAccounts(
      accountsDoc([
        { id: 'mm', keys: [key] },
        { id: 'mm2', keys: [newKey()] },
      ]),
    );
    await eventually(async () => (await ready()).json.warnings === undefined, 3000);
  });
});
