/**
 * bench:fleet-stall: what a change to the 100,000-address grant (and a flood, a lock) costs the
 * thread that serves, before and after, in one run over one throwaway PostgreSQL:
 * - edges: each build given (`--base REF`, then this tree) runs as a real
 *   one-thread edge through fleet-edge.ts's phases (idle, revocations, a NOTIFY flood, the grant
 *   changing every second, the table locked): eth_chainId p50/p99 as ratios to that edge's idle
 *   phase, revocation latency, and the serving thread's stalls measured inside the edge
 *   (stall-probe.ts: the longest, and how much of it on a CPU, waiting for one, in GC);
 * - the store in this process (this tree): ROUNDS changes of the grant, each waited for, the row
 *   checked on the checker's thread against checked in place; the store thread's stalls alike.
 * Writes bench/results/fleet-stall.{json,md}.
 * `npm run bench:fleet-stall -- --help` lists the options.
 */
import { Writable } from 'node:stream';
import postgres from 'postgres';
import { migrate } from '../../src/accounts/postgres/migrate.js';
import { PostgresAccountStore } from '../../src/accounts/postgres/store.js';
import { CLIENT_OPTIONS } from '../../src/accounts/postgres/connection.js';
import { createLogger } from '../../src/log/log.js';
import { TestPostgres } from '../../src/dev/postgres.js';
import { measureEdge, phaseTable, seedFleet, type PhaseResult } from '../common/fleet-edge.js';
import { median, round } from '../common/figures.js';
import { StallProbe, type StallReport } from '../drivers/stall-probe.js';
import { TXGATE_CLI } from '../common/paths.js';
import { startBench } from '../common/bench-run.js';
import { baseBuildOrExit } from '../common/base-build.js';
import { resultsJson } from '../common/results-schema.js';

const run = startBench(
  'bench:fleet-stall',
  'What a change to the 100,000-address grant (a flood, a lock) costs the thread that serves, before (--base) and after (this tree), in one run.',
  {
    base: {
      kind: 'text',
      arg: 'REF',
      help: 'the build before: a commit, branch or tag (built apart as bench:profile builds its base); without it this tree alone',
    },
    seconds: { kind: 'int', quick: 8, full: 20, help: 'seconds per phase' },
    rounds: { kind: 'int', quick: 8, full: 20, help: 'changes of the grant the store in this process applies, per mode' },
    resync: { kind: 'int', quick: 20_000, help: "the store's full resync period, ms" },
    'no-store': { kind: 'flag', help: 'skip the store in this process (edges only)' },
  },
);
const values = run.opt;
const ROUNDS = values.rounds;
const SECONDS = values.seconds;

interface StoreRun {
  readonly mode: string;
  readonly rounds: number;
  readonly inForceMedianMs: number;
  readonly stalls: StallReport;
}

/** The store in this process: ROUNDS changes of 'big', each waited for; the thread's stalls. */
async function storeRuns(url: string, sql: postgres.Sql): Promise<StoreRun[]> {
  const log = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
  const out: StoreRun[] = [];
  for (const [mode, offThreadBytes] of [
    ['checked on its own thread', undefined],
    ['checked in place', Number.POSITIVE_INFINITY],
  ] as const) {
    const store = new PostgresAccountStore({ url, maxStaleMs: 60_000, resyncMs: 60_000, log, ...(offThreadBytes !== undefined ? { offThreadBytes } : {}) });
    await store.start();
    while (!store.ready) await new Promise((r) => setTimeout(r, 10));
    const minTip = () =>
      store
        .current()
        .find((c) => c.id === 'big')
        ?.account?.grants.get(4663)?.minTipWei;
    const probe = new StallProbe().start();
    const applied: number[] = [];
    const base = Number((await sql`SELECT doc->'grants'->0->>'minTipWei' AS m FROM txgate_accounts WHERE id = 'big'`)[0]!.m);
    for (let i = 1; i <= ROUNDS; i++) {
      const tip = base + i;
      await sql`UPDATE txgate_accounts SET doc = jsonb_set(doc, '{grants,0,minTipWei}', ${sql.json(String(tip))}) WHERE id = 'big'`;
      const t0 = performance.now();
      while (minTip() !== BigInt(tip)) await new Promise((r) => setTimeout(r, 1));
      applied.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 300));
    }
    const stalls = probe.report();
    probe.stop();
    store.close();
    const r = { mode, rounds: ROUNDS, inForceMedianMs: round(median(applied), 0), stalls };
    out.push(r);
    process.stdout.write(`${JSON.stringify(r)}\n`);
  }
  return out;
}

const pg = await TestPostgres.start();
const sql = postgres(pg.url(), { ...CLIENT_OPTIONS, max: 4 });
try {
  await migrate(sql);
  await seedFleet(sql);
  const builds: [string, string][] = [];
  if (values.base !== undefined) builds.push(['before', baseBuildOrExit('bench:fleet-stall', values.base).cli]);
  builds.push(['after', TXGATE_CLI]);
  const edges: { label: string; cli: string; results: PhaseResult[] }[] = [];
  for (const [label, cli] of builds) {
    process.stdout.write(`edge: ${label} (${cli})\n`);
    edges.push({ label, cli, results: await measureEdge({ sql, url: pg.url(), cli, seconds: SECONDS, workers: 1, resyncMs: values.resync }) });
  }
  const store = values['no-store'] ? [] : await storeRuns(pg.url(), sql);

  const md: string[] = [
    `One-thread edges over one throwaway PostgreSQL, ${SECONDS}-s phases, resyncMs ${values.resync}, eth_chainId open-loop every 5 ms; ratios to the same edge's idle phase; stalls of the serving thread measured inside the edge (a gap over 10 ms in a 1-ms timer; schedstat and GC entries split it).`,
    '',
  ];
  for (const e of edges) md.push(phaseTable(e.label, e.results), '');
  if (store.length > 0)
    md.push(
      `The store in the bench's process (this tree), ${ROUNDS} changes of the 100,000-address grant:`,
      '',
      '| 100,000-address grant, one change | event-loop delay max ms | p99 ms | longest stall ms (on a CPU / waiting / GC) | most on a CPU in one stall ms | on a CPU in all stalls ms | commit to in force, median ms |',
      '|---|---:|---:|---:|---:|---:|---:|',
      ...store.map((r) => {
        const l = r.stalls.longest[0];
        const longest = l === undefined ? '< 10' : `${l.ms} (${l.onCpuMs} / ${l.waitingMs} / ${l.gcMs})`;
        return `| ${r.mode} | ${r.stalls.loopDelayMaxMs} | ${r.stalls.loopDelayP99Ms} | ${longest} | ${r.stalls.longestOnCpuMs} | ${r.stalls.onCpuMs} | ${r.inForceMedianMs} |`;
      }),
      '',
    );
  run.write('fleet-stall.md', md.join('\n'));
  run.write('fleet-stall.json', resultsJson('fleet-stall', { seconds: SECONDS, resyncMs: values.resync, rounds: ROUNDS, edges, store }));
  process.stdout.write(md.join('\n'));
} finally {
  await sql.end({ timeout: 1 });
  await pg.destroy();
}
