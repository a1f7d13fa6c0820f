/**
 * bench:fleet: what the account store's traffic costs an edge over PostgreSQL. One edge (the
 * real CLI, one thread by default: the store runs on the thread that serves), a throwaway
 * PostgreSQL, 20 small accounts and one grant of 100,000 tip addresses, through the phases of
 * fleet-edge.ts (idle, revocations, a NOTIFY flood, the large grant changing every second, the
 * table locked), as ratios to idle in the same run.
 * `npm run bench:fleet -- --help` lists the options (--base REF runs another build; bench:fleet-stall
 * runs a before and an after build in one run).
 */
import postgres from 'postgres';
import { migrate } from '../../src/accounts/postgres/migrate.js';
import { CLIENT_OPTIONS } from '../../src/accounts/postgres/connection.js';
import { TestPostgres } from '../../src/dev/postgres.js';
import { measureEdge, phaseTable, seedFleet } from '../common/fleet-edge.js';
import { TXGATE_CLI } from '../common/paths.js';
import { startBench } from '../common/bench-run.js';
import { baseBuildOrExit } from '../common/base-build.js';
import { resultsJson } from '../common/results-schema.js';

const run = startBench('bench:fleet', "What the account store's traffic costs an edge over PostgreSQL: latency by phase, as ratios to idle in the same run.", {
  seconds: { kind: 'int', quick: 8, full: 20, help: 'seconds per phase' },
  workers: { kind: 'int', quick: 1, help: "the edge's worker threads" },
  resync: { kind: 'int', quick: 20_000, help: "the store's full resync period, ms" },
  base: {
    kind: 'text',
    arg: 'REF',
    help: "another build of the edge (a commit, branch or tag, built apart as bench:profile builds its base); default this tree's",
  },
  label: { kind: 'text', arg: 'NAME', quick: 'after', help: 'the results files: fleet-NAME.json and .md' },
});
const values = run.opt;
const cli = values.base === undefined ? TXGATE_CLI : baseBuildOrExit('bench:fleet', values.base).cli;
const pg = await TestPostgres.start();
const sql = postgres(pg.url(), { ...CLIENT_OPTIONS, max: 4 });
try {
  await migrate(sql);
  await seedFleet(sql);
  const results = await measureEdge({
    sql,
    url: pg.url(),
    cli,
    seconds: values.seconds,
    workers: values.workers,
    resyncMs: values.resync,
  });
  const meta = { cli: values.base ?? 'this tree', workers: values.workers, seconds: values.seconds, resyncMs: values.resync };
  run.write(`fleet-${values.label}.json`, resultsJson('fleet', { ...meta, results }));
  const md = phaseTable(values.label!, results);
  run.write(`fleet-${values.label}.md`, md + '\n');
  process.stdout.write(`${md}\n`);
} finally {
  await sql.end({ timeout: 1 });
  await pg.destroy();
}
