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
  readonly time?: number;
  readonly warmupTime?: number;
}

export async function runSuite(suite: string, tasks: Record<string, () => unknown>, opts: SuiteOptions = {}): Promise<Row[]> {
  const bench = new Bench({ time: opts.time ?? Number(process.env.BENCH_TIME_MS ?? 700), warmupTime: opts.warmupTime ?? 200 });
  for (const [name, fn] of Object.entries(tasks)) bench.add(name, fn);
  await bench.run();
  const rows: Row[] = [];
  const stats = new Map<string, { median: number; p99: number; n: number }>();
  for (const t of bench.tasks) {
    const r = t.result as unknown as { latency?: { p50?: number; p99?: number; samples?: number[]; samplesCount?: number }; error?: unknown } | undefined;
    if (r === undefined || r.latency === undefined) throw new Error(`${suite}/${t.name}: no result (${String((r as { error?: unknown })?.error ?? 'failed')})`);
    stats.set(t.name, { median: r.latency.p50 ?? NaN, p99: r.latency.p99 ?? NaN, n: r.latency.samplesCount ?? r.latency.samples?.length ?? 0 });
  }
  const ref = opts.reference !== undefined ? stats.get(opts.reference)?.median : undefined;
  for (const [task, s] of stats) {
    rows.push({
      suite,
      task,
      medianUs: round(s.median * 1000),
      p99Us: round(s.p99 * 1000),
      opsPerSec: Math.round(1000 / s.median),
      ratio: ref !== undefined ? round(s.median / ref, 3) : null,
      samples: s.n,
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
  const body = rows.map((r) => [r.suite, r.task, r.medianUs.toFixed(2), r.p99Us.toFixed(2), String(r.opsPerSec), r.ratio === null ? '' : r.ratio.toFixed(3) + 'x']);
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
