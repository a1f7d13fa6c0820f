/**
 * bench:fleet-stall: how long a change to the 100,000-address grant holds the thread that runs
 * the fleet store (with one worker thread, the thread that serves). The store in this process
 * over a throwaway PostgreSQL; the grant's row updated ROUNDS times, each waited for; the event
 * loop's delay (perf_hooks, 1-ms resolution) max and p99 over the rounds, and the time from the
 * UPDATE's commit to the new version in force: the row checked on the checker's own thread
 * (row-checker.ts) against checked in place.
 */
import { Writable } from 'node:stream';
import postgres from 'postgres';
import { PostgresAccountStore, CLIENT_OPTIONS } from '../src/accounts/postgres/store.js';
import { migrate } from '../src/accounts/postgres/migrate.js';
import { createLogger } from '../src/log.js';
import { TestPostgres } from '../test/support/postgres.js';
import { RESULTS_DIR, median, round } from './lib.js';
import { StallProbe } from './stall-probe.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROUNDS = 8;
const pg = await TestPostgres.start();
const sql = postgres(pg.url(), { ...CLIENT_OPTIONS, max: 2 });
const results: Record<string, unknown>[] = [];
try {
  await migrate(sql);
  await sql`INSERT INTO txgate_accounts (id, doc) SELECT 'big', jsonb_build_object('id', 'big', 'keySha256', '[]'::jsonb, 'grants', jsonb_build_array(jsonb_build_object(
      'chainId', 4663, 'rateLimit', '{"perSecond":10,"burst":10}'::jsonb, 'minTipWei', '0',
      'tipAddresses', (SELECT jsonb_agg('0x' || lpad(to_hex(g), 40, '0')) FROM generate_series(1, 100000) g))))`;
  const log = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
  for (const [mode, offThreadBytes] of [
    ['checked on its own thread', undefined],
    ['checked in place', Number.POSITIVE_INFINITY],
  ] as const) {
    const store = new PostgresAccountStore({
      url: pg.url(),
      maxStaleMs: 60_000,
      resyncMs: 60_000,
      log,
      ...(offThreadBytes !== undefined ? { offThreadBytes } : {}),
    });
    await store.start();
    while (!store.ready) await new Promise((r) => setTimeout(r, 10));
    const minTip = () =>
      store
        .current()
        .find((c) => c.id === 'big')
        ?.account?.grants.get(4663)?.minTipWei;
    const probe = new StallProbe().start();
    const applied: number[] = [];
    for (let i = 1; i <= ROUNDS; i++) {
      await sql`UPDATE txgate_accounts SET doc = jsonb_set(doc, '{grants,0,minTipWei}', ${sql.json(String(i))}) WHERE id = 'big'`;
      const t0 = performance.now();
      while (minTip() !== BigInt(i)) await new Promise((r) => setTimeout(r, 1));
      applied.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 300));
    }
    const s = probe.report();
    probe.stop();
    store.close();
    const r = {
      mode,
      rounds: ROUNDS,
      loopDelayMaxMs: s.loopDelayMaxMs,
      loopDelayP99Ms: s.loopDelayP99Ms,
      inForceMedianMs: round(median(applied), 0),
      stalls: s,
    };
    results.push(r);
    process.stdout.write(`${JSON.stringify(r)}\n`);
  }
  const md = [
    '| 100,000-address grant, one change | event-loop delay max ms | p99 ms | commit to in force, median ms |',
    '|---|---:|---:|---:|',
    ...results.map((r) => `| ${r.mode} | ${r.loopDelayMaxMs} | ${r.loopDelayP99Ms} | ${r.inForceMedianMs} |`),
  ].join('\n');
  writeFileSync(join(RESULTS_DIR, 'fleet-stall.md'), md + '\n');
  writeFileSync(join(RESULTS_DIR, 'fleet-stall.json'), JSON.stringify(results, null, 2) + '\n');
  process.stdout.write(md + '\n');
} finally {
  await sql.end({ timeout: 1 });
  await pg.destroy();
}
