/** `npm run bench`: every in-process bench suite; writes bench/results/latest.json and a table. */
import { saveRows, table, type Row } from './lib.js';
import { run as decode } from './decode.bench.js';
import { run as stages } from './stages.bench.js';
import { run as pipeline } from './pipeline.bench.js';

const only = process.argv[2];
const suites: Record<string, () => Promise<Row[]>> = { decode, stages, pipeline };
const rows: Row[] = [];
for (const [name, run] of Object.entries(suites)) {
  if (only !== undefined && only !== name) continue;
  process.stderr.write(`running ${name}…\n`);
  rows.push(...(await run()));
}
const path = saveRows(rows);
process.stdout.write(table(rows) + '\n\nwritten to ' + path + '\n');
