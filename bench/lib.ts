/**
 * Shared bench helpers: run a tinybench suite, report each task's median and p99 per operation,
 * and every figure as a ratio to the suite's reference task measured in the same run (absolute
 * figures drift on a shared machine; ratios hold).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Bench } from 'tinybench';

export interface Row {
  readonly suite: string;
  readonly task: string;
  readonly medianUs: number;
  readonly p99Us: number;
  readonly opsPerSec: number;
  /** median / reference median. */
  readonly ratio: number | null;
  readonly samples: number;
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
  const rounds = opts.rounds ?? Number(process.env.BENCH_ROUNDS ?? 5);
  const time = (opts.time ?? Number(process.env.BENCH_TIME_MS ?? 700)) / rounds;
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
  const ref = opts.reference !== undefined ? stats.get(opts.reference)?.median : undefined;
  for (const [task, st] of stats) {
    rows.push({
      suite,
      task,
      medianUs: round(st.median * 1000),
      p99Us: round(st.p99 * 1000),
      opsPerSec: Math.round(1000 / st.median),
      ratio: ref !== undefined ? round(st.median / ref, 3) : null,
      samples: st.n,
    });
  }
  return rows;
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function table(rows: readonly Row[]): string {
  const head = ['suite', 'task', 'median µs', 'p99 µs', 'ops/s', 'ratio'];
  const body = rows.map((r) => [
    r.suite,
    r.task,
    r.medianUs.toFixed(2),
    r.p99Us.toFixed(2),
    String(r.opsPerSec),
    r.ratio === null ? '' : r.ratio.toFixed(3) + 'x',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => '| ' + cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ') + ' |';
  return [line(head), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...body.map(line)].join('\n');
}

export const RESULTS_DIR = join(import.meta.dirname, '../../bench/results');

/** Merges rows (by suite) into bench/results/latest.json. */
export function saveRows(rows: readonly Row[], file = 'latest.json'): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, file);
  const prev: { rows: Row[] } = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : { rows: [] };
  const suites = new Set(rows.map((r) => r.suite));
  const merged = [...prev.rows.filter((r) => !suites.has(r.suite)), ...rows];
  writeFileSync(path, JSON.stringify({ node: process.version, cpu: cpuModel(), date: new Date().toISOString(), rows: merged }, null, 2) + '\n');
  return path;
}

export function cpuModel(): string {
  try {
    return /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Prevents the optimizer from dropping a benchmarked result. */
export let sink: unknown;
export function keep(v: unknown): void {
  sink = v;
}

/** The item with the median key (the upper one of an even count). */
export function medianBy<T>(xs: readonly T[], key: (x: T) => number): T {
  return [...xs].sort((a, b) => key(a) - key(b))[Math.floor(xs.length / 2)]!;
}

export function median(xs: readonly number[]): number {
  return medianBy(xs, (x) => x);
}

/** utime + stime of a process and its threads, in µs (clock ticks are 10 ms). */
export function cpuMicros(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
}
