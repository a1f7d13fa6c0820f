/**
 * bench:fleet: what the account store's traffic costs an edge over PostgreSQL. One edge (the
 * real CLI, one thread by default: the store runs on the thread that serves), a throwaway
 * PostgreSQL, 20 small accounts and one grant of 100,000 tip addresses. A probe sends
 * eth_chainId 200 times a second on one keep-alive connection through each phase:
 * - idle (the reference), then idle but for the two revocations measured;
 * - a NOTIFY flood: 50 a second, any payload (junk, unknown ids, versions held, far-future versions);
 * - the 100,000-address grant changing every second (a new version each time);
 * - the accounts table locked (ACCESS EXCLUSIVE) for the whole phase, a change notified every second.
 * p50/p99/max of each phase, as ratios to idle in the same run; revocation latency (the UPDATE's
 * commit to the first 401 on GET /tip-addresses) twice in each phase but idle and locked, and the
 * edge's backends (pg_stat_activity) at most during each phase.
 * Usage: npm run bench:fleet -- [--seconds 8] [--workers 1] [--resync 20000] [--cli PATH/dist/src/cli.js] [--label after]
 * (--cli runs another build of txgate against the same database: the before/after pair.)
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { Pool } from 'undici';
import { keySha256 } from '../src/accounts/keys.js';
import { migrate } from '../src/accounts/postgres/migrate.js';
import { CLIENT_OPTIONS } from '../src/accounts/postgres/store.js';
import { TestPostgres } from '../test/support/postgres.js';
import { freePort, writeCliConfig } from '../test/support/processes.js';
import { connect } from 'node:net';
import { spawn } from 'node:child_process';
import { RESULTS_DIR, round } from './lib.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    workers: { type: 'string', default: '1' },
    cli: { type: 'string' },
    label: { type: 'string', default: 'after' },
    resync: { type: 'string', default: '20000' },
  },
});
const SECONDS = Number(values.seconds);
const CLI = values.cli ?? join(import.meta.dirname, '../src/cli.js');
const TIP = '0xa0ee7a142d267c1f36714e4a8f75612f20a79720';

const pg = await TestPostgres.start();
const sql = postgres(pg.url(), { ...CLIENT_OPTIONS, max: 4 });
let edge: ReturnType<typeof spawn> | null = null;
try {
  await migrate(sql);
  const grant = { chainId: 4663, rateLimit: { perSecond: 10, burst: 10 }, tipAddresses: [TIP], minTipWei: '0' };
  for (let i = 0; i < 20; i++) {
    const d = { id: `acct${i}`, keySha256: [keySha256(`bench-key-${i}`)], grants: [grant] };
    await sql`INSERT INTO txgate_accounts (id, doc) VALUES (${d.id}, ${sql.json(d)})`;
  }
  const probeKey = 'bench-probe-key-0';
  await sql`INSERT INTO txgate_accounts (id, doc) VALUES ('probe', ${sql.json({ id: 'probe', keySha256: [keySha256(probeKey)], grants: [grant] })})`;
  await sql`INSERT INTO txgate_accounts (id, doc) SELECT 'big', jsonb_build_object('id', 'big', 'keySha256', '[]'::jsonb, 'grants', jsonb_build_array(jsonb_build_object(
      'chainId', 4663, 'rateLimit', '{"perSecond":10,"burst":10}'::jsonb, 'minTipWei', '0',
      'tipAddresses', (SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 100000) g))))`;

  const dir = mkdtempSync(join(tmpdir(), 'txgate-bench-fleet-'));
  const port = await freePort();
  const config = writeCliConfig(dir, {
    listen: { host: '127.0.0.1', port },
    workers: Number(values.workers),
    log: { level: 'warn' },
    chains: [{ chainId: 4663, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }],
    accounts: { store: 'postgres', url: pg.url(), maxStaleMs: 120_000, resyncMs: Number(values.resync) },
  });
  const started = performance.now();
  const proc = spawn(process.execPath, [CLI, '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  edge = proc;
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  // Log level warn (no request lines): the port is known, and up once it accepts a connection.
  for (;;) {
    const up = await new Promise<boolean>((r) => {
      const c = connect(port, '127.0.0.1', () => (c.end(), r(true)));
      c.on('error', () => r(false));
    });
    if (up) break;
    if (proc.exitCode !== null || performance.now() - started > 60_000) throw new Error(`the edge did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 16, pipelining: 1 });
  const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}';
  let failures = 0;
  /** ms to the answer; a request not answered within 15 s counts as 15 s (and a failure). */
  const chainId = async (): Promise<number> => {
    const t0 = performance.now();
    try {
      const r = await pool.request({
        path: '/',
        method: 'POST',
        headers: { host: 'localhost', 'content-type': 'application/json' },
        body,
        headersTimeout: 15_000,
      });
      await r.body.text();
      if (r.statusCode !== 200) failures++;
    } catch {
      failures++;
    }
    return performance.now() - t0;
  };
  const tipStatus = async (key: string): Promise<number> => {
    const r = await pool.request({ path: '/tip-addresses', method: 'GET', headers: { host: 'localhost', 'x-api-key': key } });
    await r.body.text();
    return r.statusCode;
  };
  // Ready: the big grant loaded (its version held) and the probe key served.
  for (let i = 0; (await tipStatus(probeKey)) !== 200; i++) {
    if (i > 3000) throw new Error('the edge never served the probe key');
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => setTimeout(r, 2_000));

  const backends = async () => Number((await sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'txgate'`)[0]!.n);
  let keyN = 0;
  /** A new key for the probe account, then its revocation: ms from the UPDATE's commit to the first 401. */
  const revocation = async (): Promise<number> => {
    const k = `bench-probe-key-${++keyN}`;
    await sql`UPDATE txgate_accounts SET doc = jsonb_set(doc, '{keySha256}', ${sql.json([keySha256(k)])}) WHERE id = 'probe'`;
    for (let i = 0; (await tipStatus(k)) !== 200; i++) {
      if (i > 3000) throw new Error('the new key never arrived');
      await new Promise((r) => setTimeout(r, 5));
    }
    await sql`UPDATE txgate_accounts SET doc = jsonb_set(doc, '{keySha256}', ${sql.json([keySha256(`${k}-next`)])}) WHERE id = 'probe'`;
    const t0 = performance.now();
    for (let i = 0; (await tipStatus(k)) !== 401; i++) {
      if (i > 6000) return Number.POSITIVE_INFINITY;
      await new Promise((r) => setTimeout(r, 5));
    }
    return performance.now() - t0;
  };

  interface Phase {
    name: string;
    /** Starts the phase's traffic; returns what stops it. */
    start(): () => Promise<void>;
    revoke: boolean;
  }
  let v = 1_000_000;
  const phases: Phase[] = [
    { name: 'idle', start: () => async () => {}, revoke: false },
    { name: 'idle but for two revocations', start: () => async () => {}, revoke: true },
    {
      name: 'NOTIFY flood (50/s)',
      revoke: true,
      start() {
        let n = 0;
        const payloads = [
          () => `junk ${n}`,
          () => JSON.stringify({ id: `nobody${n}`, version: n }),
          () => JSON.stringify({ id: 'big', version: 1 }),
          () => JSON.stringify({ id: 'big', version: ++v }),
          () => JSON.stringify({ id: `acct${n % 20}`, version: ++v }),
        ];
        const t = setInterval(() => void sql.notify('txgate_accounts', payloads[n++ % payloads.length]!()).catch(() => {}), 20);
        return async () => clearInterval(t);
      },
    },
    {
      name: '100,000-address grant changing every second',
      revoke: true,
      start() {
        let n = 0;
        const t = setInterval(
          () => void sql`UPDATE txgate_accounts SET doc = jsonb_set(doc, '{grants,0,minTipWei}', ${sql.json(String(++n))}) WHERE id = 'big'`.catch(() => {}),
          1_000,
        );
        return async () => clearInterval(t);
      },
    },
    {
      name: 'accounts table locked',
      revoke: false,
      start() {
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        const tx = sql.begin(async (t) => {
          await t`LOCK TABLE txgate_accounts IN ACCESS EXCLUSIVE MODE`;
          await held;
        });
        const n = setInterval(() => void sql.notify('txgate_accounts', JSON.stringify({ id: 'acct1', version: ++v })).catch(() => {}), 1_000);
        return async () => {
          clearInterval(n);
          release();
          await tx;
        };
      },
    },
  ];

  const results: Record<string, unknown>[] = [];
  let idle = { p50: 0, p99: 0 };
  for (const phase of phases) {
    const stop = phase.start();
    failures = 0;
    const samples: number[] = [];
    const revocations: number[] = [];
    let most = 0;
    const t0 = performance.now();
    const sampler = setInterval(
      () =>
        void backends().then(
          (n) => (most = Math.max(most, n)),
          () => {},
        ),
      250,
    );
    // Open loop: one request every 5 ms whatever the answers (a stall delays every request
    // sent meanwhile, and each counts), over up to 16 keep-alive connections.
    const probe = (async () => {
      const inFlight: Promise<void>[] = [];
      while (performance.now() - t0 < SECONDS * 1000) {
        inFlight.push(chainId().then((ms) => void samples.push(ms)));
        await new Promise((r) => setTimeout(r, 5));
      }
      await Promise.all(inFlight);
    })();
    if (phase.revoke) {
      await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 4));
      revocations.push(await revocation());
      await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 4));
      revocations.push(await revocation());
    }
    await probe;
    clearInterval(sampler);
    await stop();
    samples.sort((a, b) => a - b);
    const q = (p: number) => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))]!;
    const r = { p50: q(0.5), p99: q(0.99), max: samples[samples.length - 1]! };
    if (phase.name === 'idle') idle = r;
    results.push({
      phase: phase.name,
      requests: samples.length,
      p50Ms: round(r.p50, 3),
      p99Ms: round(r.p99, 3),
      maxMs: round(r.max, 1),
      p50VsIdle: round(r.p50 / idle.p50, 2),
      p99VsIdle: round(r.p99 / idle.p99, 2),
      revocationMs: revocations.map((x) => round(x, 0)),
      failed: failures,
      backendsAtMost: most,
    });
    process.stdout.write(`${JSON.stringify(results[results.length - 1])}\n`);
    await new Promise((r) => setTimeout(r, 2_000)); // the lock's queue drains before the next phase
  }
  const file = join(RESULTS_DIR, `fleet-${values.label}.json`);
  writeFileSync(
    file,
    JSON.stringify({ cli: values.cli ?? 'this tree', workers: Number(values.workers), seconds: SECONDS, resyncMs: Number(values.resync), results }, null, 2) +
      '\n',
  );
  const md = [
    `| phase (${values.label}) | eth_chainId p50 ms | p99 ms | max ms | p50 / idle | p99 / idle | unanswered in 15 s | revocation ms | edge backends at most |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.phase} | ${r.p50Ms} | ${r.p99Ms} | ${r.maxMs} | ${r.p50VsIdle}x | ${r.p99VsIdle}x | ${r.failed} | ${(r.revocationMs as number[]).join(', ') || '–'} | ${r.backendsAtMost} |`,
    ),
  ].join('\n');
  writeFileSync(file.replace(/\.json$/, '.md'), md + '\n');
  process.stdout.write(`${md}\n`);
  await pool.close();
} finally {
  edge?.kill('SIGTERM');
  await sql.end({ timeout: 1 });
  await pg.destroy();
}
