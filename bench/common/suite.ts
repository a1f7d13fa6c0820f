/**
 * A tinybench suite: run it, report each task's median and p99 per operation, and every figure
 * as a ratio to the suite's reference task measured in the same run (absolute figures drift on a
 * shared machine; ratios hold); its rows as a table and in the results file.
 * (The command line is options.ts's, a run's start bench-run.ts's, medians and rounding
 * figures.ts's, the machine's readings cpu.ts's.)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { cpuModel } from './cpu.js';
import { belowTimer, median, medianName, round, timerResolutionMs } from './figures.js';
import { resultsJson } from './results-schema.js';

export interface Row {
  readonly suite: string;
  readonly task: string;
  readonly medianUs: number;
  readonly p99Us: number;
  /** 1 / median; null where the median is within a few ticks of the timer (an artifact, not a figure). */
  readonly opsPerSec: number | null;
  /** median / reference median (null: no reference, or a median below the timer's resolution). */
  readonly ratio: number | null;
  /** The suite's reference task (its ratio is 1 by definition). */
  readonly reference: boolean;
  readonly samples: number;
  /** How the median is named: "median of 3 rounds" (figures.ts). */
  readonly of: string;
}

export interface SuiteOptions {
  /** The task every other one is divided by. */
  readonly reference?: string;
  /** Total measuring time per task, split over the rounds. */
  readonly time?: number;
  readonly warmupTime?: number;
  readonly rounds?: number;
}

export async function runSuite(suite: string, tasks: Record<string, () => unknown>, opts: SuiteOptions = {}): Promise<Row[]> {
  // Several short rounds, tasks interleaved round by round, and the median of the rounds'
  // medians: drift on a shared machine then hits every task alike instead of whichever ran last.
  const rounds = opts.rounds ?? 5;
  const time = (opts.time ?? 700) / rounds;
  const perTask = new Map<string, { medians: number[]; p99s: number[]; n: number }>();
  for (let r = 0; r < rounds; r++) {
    const bench = new Bench({ time, warmupTime: r === 0 ? (opts.warmupTime ?? 200) : 20 });
    for (const [name, fn] of Object.entries(tasks)) bench.add(name, fn);
    await bench.run();
    for (const t of bench.tasks) {
      const res = t.result as unknown as { latency?: { p50?: number; p99?: number; samplesCount?: number; samples?: number[] }; error?: unknown } | undefined;
      if (res === undefined || res.latency === undefined) throw new Error(`${suite}/${t.name}: no result (${String(res?.error ?? 'failed')})`);
      const e = perTask.get(t.name) ?? { medians: [], p99s: [], n: 0 };
      e.medians.push(res.latency.p50 ?? NaN);
      e.p99s.push(res.latency.p99 ?? NaN);
      e.n += res.latency.samplesCount ?? res.latency.samples?.length ?? 0;
      perTask.set(t.name, e);
    }
  }
  const stats = new Map([...perTask].map(([k, v]) => [k, { median: median(v.medians), p99: median(v.p99s), n: v.n }]));
  const rows: Row[] = [];
  const tick = timerResolutionMs();
  const refMs = opts.reference !== undefined ? stats.get(opts.reference)?.median : undefined;
  const ref = refMs !== undefined && !belowTimer(refMs, tick) ? refMs : undefined;
  for (const [task, st] of stats) {
    const artifact = belowTimer(st.median, tick);
    rows.push({
      suite,
      task,
      medianUs: round(st.median * 1000),
      p99Us: round(st.p99 * 1000),
      opsPerSec: artifact ? null : Math.round(1000 / st.median),
      ratio: ref !== undefined && !artifact ? round(st.median / ref, 3) : null,
      reference: task === opts.reference,
      samples: st.n,
      of: medianName(rounds),
    });
  }
  return rows;
}

/**
 * The rows as an aligned text table (Markdown as well): the reference task is marked, and a time
 * at the timer's resolution shows as such instead of an ops/s figure.
 */
export function table(rows: readonly Row[]): string {
  const head = ['suite', 'task', 'median µs', 'p99 µs', 'ops/s', 'ratio to the reference'];
  const body = rows.map((r) => [
    r.suite,
    r.reference ? `${r.task} (reference)` : r.task,
    r.medianUs.toFixed(2),
    r.p99Us.toFixed(2),
    r.opsPerSec === null ? "at the timer's resolution: no figure" : String(r.opsPerSec),
    r.reference ? '1 (reference)' : r.ratio === null ? '' : r.ratio.toFixed(3) + 'x',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => '| ' + cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ') + ' |';
  const of = [...new Set(rows.map((r) => r.of))].join('; ');
  return [
    line(head),
    '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|',
    ...body.map(line),
    '',
    `(each figure: the ${of}; timer resolution ${round(timerResolutionMs() * 1e6, 0)} ns)`,
  ].join('\n');
}

/** Merges rows (by suite) into `dir`/latest.json. */
export function saveRows(rows: readonly Row[], dir: string, file = 'latest.json'): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, file);
  const prev: { rows: Row[] } = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : { rows: [] };
  const suites = new Set(rows.map((r) => r.suite));
  const merged = [...prev.rows.filter((r) => !suites.has(r.suite)), ...rows];
  writeFileSync(path, resultsJson('micro', { node: process.version, cpu: cpuModel(), date: new Date().toISOString(), rows: merged }));
  return path;
}

/** Prevents the optimizer from dropping a benchmarked result. */
export let sink: unknown;
export function keep(v: unknown): void {
  sink = v;
}
