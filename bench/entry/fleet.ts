/**
 * bench:fleet: what the account store's traffic costs an edge over PostgreSQL. One edge (the
 * real CLI, one thread by default: the store runs on the thread that serves), a throwaway
 * PostgreSQL, 20 small accounts and one grant of 100,000 tip addresses, through the phases of
 * fleet-edge.ts (idle, revocations, a NOTIFY flood, the large grant changing every second, the
 * table locked), as ratios to idle in the same run.
 * Usage: npm run bench:fleet -- [--seconds 8] [--workers 1] [--resync 20000] [--cli PATH/dist/src/cli.js] [--label after] [--out DIR | --save]
 * (--cli runs another build of txgate; bench:fleet-stall runs a before and an after build in one run.)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { migrate } from '../../src/accounts/postgres/migrate.js';
import { CLIENT_OPTIONS } from '../../src/accounts/postgres/connection.js';
import { TestPostgres } from '../../src/dev/postgres.js';
import { measureEdge, phaseTable, seedFleet } from '../common/fleet-edge.js';
import { TXGATE_CLI } from '../common/paths.js';
import { OUT_OPTIONS, parseOwnArgs, resultsDir } from '../common/options.js';
import { resultsJson } from '../common/results-schema.js';

const values = parseOwnArgs('bench:fleet', {
  seconds: { type: 'string', default: '8' },
  workers: { type: 'string', default: '1' },
  cli: { type: 'string' },
  label: { type: 'string', default: 'after' },
  resync: { type: 'string', default: '20000' },
  help: { type: 'boolean', default: false },
  ...OUT_OPTIONS,
});
if (values.help) {
  process.stdout.write(
    'Usage: npm run bench:fleet -- [--seconds 8] [--workers 1] [--resync 20000] [--cli PATH/dist/src/cli.js] [--label after] [--out DIR | --save]\n',
  );
  process.exit(0);
}
const OUT = resultsDir('bench:fleet', values);
const pg = await TestPostgres.start();
const sql = postgres(pg.url(), { ...CLIENT_OPTIONS, max: 4 });
try {
  await migrate(sql);
  await seedFleet(sql);
  const cli = values.cli ?? TXGATE_CLI;
  const results = await measureEdge({
    sql,
    url: pg.url(),
    cli,
    seconds: Number(values.seconds),
    workers: Number(values.workers),
    resyncMs: Number(values.resync),
  });
  const file = join(OUT, `fleet-${values.label}.json`);
  const meta = { cli: values.cli ?? 'this tree', workers: Number(values.workers), seconds: Number(values.seconds), resyncMs: Number(values.resync) };
  writeFileSync(file, resultsJson('fleet', { ...meta, results }));
  const md = phaseTable(values.label, results);
  writeFileSync(file.replace(/\.json$/, '.md'), md + '\n');
  process.stdout.write(`${md}\n`);
} finally {
  await sql.end({ timeout: 1 });
  await pg.destroy();
}
