/** `npm run bench`: the in-process bench suites (tinybench); writes latest.json and latest.md and prints a table per suite as it ends. */
import { startBench } from '../common/bench-run.js';
import { saveRows, table, type Row } from '../common/suite.js';
import { run as decode } from '../micro/decode.bench.js';
import { run as pipeline } from '../micro/pipeline.bench.js';

const suites: Record<string, (o: { time: number; rounds: number }) => Promise<Row[]>> = { decode, pipeline };
const run = startBench(
  'bench',
  "In-process bench suites: decode/verify and the whole pipeline (each stage's own cost: bench:profile); each figure also as a ratio to its suite's reference task.",
  {
    suites: { kind: 'list', choices: Object.keys(suites), help: 'only these suites' },
    'time-ms': { kind: 'int', quick: 300, full: 700, help: 'measuring time per task, split over the rounds' },
    rounds: { kind: 'int', median: true, quick: 3, full: 5, help: "interleaved rounds per suite, an odd number ≥ 3 (the median of the rounds' medians)" },
  },
);
const rows: Row[] = [];
const md: string[] = [`# npm run bench (${new Date().toISOString()}, Node ${process.version})`, ''];
for (const [name, suite] of Object.entries(suites)) {
  if (run.opt.suites !== undefined && !run.opt.suites.includes(name)) continue;
  process.stderr.write(`running ${name}…\n`);
  const got = await suite({ time: run.opt['time-ms'], rounds: run.opt.rounds });
  process.stdout.write(table(got) + '\n\n');
  md.push(`## ${name}`, '', table(got), '');
  rows.push(...got);
}
const json = saveRows(rows, run.outDir);
const mdPath = run.write('latest.md', md.join('\n'));
process.stdout.write(`written to ${mdPath} and ${json}\n`);
