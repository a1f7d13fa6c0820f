import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Sql } from 'postgres';
import { Pool } from 'undici';
import { keySha256 } from '../../src/accounts/keys.js';
import { freePort } from '../../src/base/free-port.js';
import { round } from './figures.js';
import { startTxgate, type RunningTxgate } from './txgate.js';
import type { StallReport } from '../drivers/stall-probe.js';
import { driver } from './paths.js';

const TIP = '0xa0ee7a142d267c1f36714e4a8f75612f20a79720';
const PROBE_KEY = 'bench-probe-key-0';
const GRANT = { chainId: 4663, rateLimit: { perSecond: 10, burst: 10 }, tipAddresses: [TIP], minTipWei: '0' };

/** 20 small accounts, the probe account and the 100,000-address grant ('big'), in a migrated database. */
export async function seedFleet(sql: Sql): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const d = { id: `acct${i}`, keySha256: [keySha256(`bench-key-${i}`)], grants: [GRANT] };
    await sql`INSERT INTO txgate_accounts (id, doc) VALUES (${d.id}, ${sql.json(d)})`;
  }
  await sql`INSERT INTO txgate_accounts (id, doc) VALUES ('probe', ${sql.json({ id: 'probe', keySha256: [keySha256(PROBE_KEY)], grants: [GRANT] })})`;
  await sql`INSERT INTO txgate_accounts (id, doc) SELECT 'big', jsonb_build_object('id', 'big', 'keySha256', '[]'::jsonb, 'grants', jsonb_build_array(jsonb_build_object(
      'chainId', 4663, 'rateLimit', '{"perSecond":10,"burst":10}'::jsonb, 'minTipWei', '0',
      'tipAddresses', (SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 100000) g))))`;
}

export interface EdgeOptions {
  readonly sql: Sql;
  readonly url: string;
  /** The build's dist/src/cli.js. */
  readonly cli: string;
  readonly seconds: number;
  readonly workers: number;
  readonly resyncMs: number;
}

export interface PhaseResult {
  readonly phase: string;
  readonly requests: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly p50VsIdle: number;
  readonly p99VsIdle: number;
  readonly revocationMs: readonly number[];
  readonly failed: number;
  readonly backendsAtMost: number;
  /** The serving (main) thread's stalls through the phase, measured inside the edge. */
  readonly stalls: StallReport | null;
}

const PROBE_MODULE = pathToFileURL(driver('stall-probe')).href;

export async function measureEdge(o: EdgeOptions): Promise<PhaseResult[]> {
  const { sql } = o;
  // Each edge starts from the same rows: the probe account with its first key.
  await sql`UPDATE txgate_accounts SET doc = ${sql.json({ id: 'probe', keySha256: [keySha256(PROBE_KEY)], grants: [GRANT] })} WHERE id = 'probe'`;
  const dir = mkdtempSync(join(tmpdir(), 'txgate-bench-fleet-'));
  const stallFile = join(dir, 'stalls.json');
  let edge: RunningTxgate | null = null;
  const pool: { p: Pool | null } = { p: null };
  try {
    // FLEET_EDGE_NODE_ARGS: more node options for the edge (--cpu-prof --cpu-prof-dir=…: NODE_OPTIONS refuses them).
    const extra = (process.env.FLEET_EDGE_NODE_ARGS ?? '').split(' ').filter(Boolean);
    edge = await startTxgate({
      config: {
        listen: { host: '127.0.0.1', port: await freePort() },
        workers: o.workers,
        log: { level: 'warn' },
        chains: [{ chainId: 4663, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }],
        accounts: { store: 'postgres', url: o.url, maxStaleMs: 120_000, resyncMs: o.resyncMs },
      },
      cli: o.cli,
      nodeArgs: [...extra, '--import', PROBE_MODULE],
      env: { ...process.env, STALL_PROBE_FILE: stallFile },
      log: 'pipe',
      // Log level warn (no request lines), its sequencer nobody: up once it accepts a connection.
      ready: 'tcp',
      readyMs: 60_000,
      parent: dir,
    });
    const proc = edge.proc;
    const port = edge.port;
    let seq = 0;
    /** The edge's stall report since the last call (SIGUSR2 to the preloaded probe). */
    const stalls = async (): Promise<StallReport | null> => {
      proc.kill('SIGUSR2');
      const want = ++seq;
      for (let i = 0; i < 500; i++) {
        if (existsSync(stallFile)) {
          try {
            const r = JSON.parse(readFileSync(stallFile, 'utf8')) as StallReport & { seq: number };
            if (r.seq === want) return r;
          } catch {
            // being written
          }
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      return null;
    };
    const p = new Pool(`http://127.0.0.1:${port}`, { connections: 16, pipelining: 1 });
    pool.p = p;
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}';
    let failures = 0;
    /** ms to the answer; a request not answered within 15 s counts as 15 s (and a failure). */
    const chainId = async (): Promise<number> => {
      const t0 = performance.now();
      try {
        const r = await p.request({
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
      const r = await p.request({ path: '/tip-addresses', method: 'GET', headers: { host: 'localhost', 'x-api-key': key } });
      await r.body.text();
      return r.statusCode;
    };
    for (let i = 0; (await tipStatus(PROBE_KEY)) !== 200; i++) {
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

    const results: PhaseResult[] = [];
    let idle = { p50: 0, p99: 0 };
    for (const phase of phases) {
      await stalls(); // a new window
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
        while (performance.now() - t0 < o.seconds * 1000) {
          inFlight.push(chainId().then((ms) => void samples.push(ms)));
          await new Promise((r) => setTimeout(r, 5));
        }
        await Promise.all(inFlight);
      })();
      if (phase.revoke) {
        await new Promise((r) => setTimeout(r, (o.seconds * 1000) / 4));
        revocations.push(await revocation());
        await new Promise((r) => setTimeout(r, (o.seconds * 1000) / 4));
        revocations.push(await revocation());
      }
      await probe;
      const s = await stalls();
      clearInterval(sampler);
      await stop();
      samples.sort((a, b) => a - b);
      const q = (x: number) => samples[Math.min(samples.length - 1, Math.floor(x * samples.length))]!;
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
        stalls: s,
      });
      process.stdout.write(`${JSON.stringify(results[results.length - 1])}\n`);
      await new Promise((r) => setTimeout(r, 2_000)); // the lock's queue drains before the next phase
    }
    return results;
  } finally {
    await pool.p?.close();
    await edge?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The phases as a Markdown table (`label` names the build). */
export function phaseTable(label: string, results: readonly PhaseResult[]): string {
  return [
    `| phase (${label}) | eth_chainId p50 ms | p99 ms | max ms | p50 / idle | p99 / idle | unanswered in 15 s | revocation ms | edge backends at most | serving thread's longest stall ms (on a CPU / waiting for one / in GC) | its most on a CPU in one stall ms |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map((r) => {
      const l = r.stalls?.longest[0];
      const stall = r.stalls === null ? '–' : l === undefined ? '< 10' : `${l.ms} (${l.onCpuMs} / ${l.waitingMs} / ${l.gcMs})`;
      return `| ${r.phase} | ${r.p50Ms} | ${r.p99Ms} | ${r.maxMs} | ${r.p50VsIdle}x | ${r.p99VsIdle}x | ${r.failed} | ${r.revocationMs.join(', ') || '–'} | ${r.backendsAtMost} | ${stall} | ${r.stalls?.longestOnCpuMs ?? '–'} |`;
    }),
  ].join('\n');
}
