/**
 * Shared bench helpers: run a tinybench suite, report each task's median and p99 per operation,
 * and every figure as a ratio to the suite's reference task measured in the same run (absolute
 * figures drift on a shared machine; ratios hold).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Bench } from 'tinybench';
import { belowTimer, medianName, timerResolutionMs } from './figures.js';
import { RESULTS_DIR } from './paths.js';

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

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
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

export { RESULTS_DIR } from './paths.js';

/** Merges rows (by suite) into `dir`/latest.json. */
export function saveRows(rows: readonly Row[], dir: string, file = 'latest.json'): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, file);
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

// --- the benches' command line ------------------------------------------------------------------

/**
 * One option of a bench: its kind, what it does, and its value in the quick run (the default)
 * and in the long run (`--full`; the quick value when absent).
 */
export type OptionSpec =
  | { readonly kind: 'int'; readonly min?: number; readonly quick: number; readonly full?: number; readonly help: string; readonly arg?: string }
  | { readonly kind: 'number'; readonly min?: number; readonly quick: number; readonly full?: number; readonly help: string; readonly arg?: string }
  | { readonly kind: 'numbers'; readonly min?: number; readonly quick: readonly number[]; readonly full?: readonly number[]; readonly help: string }
  | {
      readonly kind: 'list';
      /** The names it accepts (anything else is refused); the quick/full value absent: all of them. */
      readonly choices?: readonly string[];
      readonly quick?: readonly string[];
      readonly full?: readonly string[];
      readonly help: string;
    }
  | { readonly kind: 'text'; readonly quick?: string; readonly help: string; readonly arg?: string }
  | { readonly kind: 'flag'; readonly help: string };

type ValueOf<S extends OptionSpec> = S extends { kind: 'int' | 'number' }
  ? number
  : S extends { kind: 'numbers' }
    ? readonly number[]
    : S extends { kind: 'list' }
      ? readonly string[] | undefined
      : S extends { kind: 'text' }
        ? string | undefined
        : boolean;

export type Values<T extends Record<string, OptionSpec>> = { readonly [K in keyof T]: ValueOf<T[K]> };

/** A refused command line: its one line, and exit 2. */
export class UsageError extends Error {}

/** Options every bench takes. */
const COMMON = ['help', 'h', 'full', 'out', 'save'];

export interface Parsed<T extends Record<string, OptionSpec>> {
  readonly opt: Values<T>;
  readonly full: boolean;
  readonly save: boolean;
  readonly help: boolean;
  /** --out as given (resolved later against the user's directory). */
  readonly out: string | undefined;
}

/** Parses `argv` against `specs` (and the common options); throws UsageError with one line. */
export function parseBenchArgs<T extends Record<string, OptionSpec>>(specs: T, argv: readonly string[]): Parsed<T> {
  const given = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-h') {
      given.set('help', true);
      continue;
    }
    const m = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(a);
    if (m === null) throw new UsageError(a.startsWith('-') ? `unknown option ${a}` : `unexpected argument '${a}' (options start with --)`);
    const name = m[1]!;
    if (name !== 'help' && !COMMON.includes(name) && !Object.hasOwn(specs, name)) throw new UsageError(`unknown option --${name}`);
    if (given.has(name)) throw new UsageError(`--${name} given twice`);
    const isFlag = name === 'help' || name === 'full' || name === 'save' || specs[name]?.kind === 'flag';
    if (isFlag) {
      if (m[2] !== undefined) throw new UsageError(`--${name} takes no value`);
      given.set(name, true);
      continue;
    }
    let value = m[2];
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new UsageError(`--${name} needs a value`);
      value = next;
      i++;
    }
    given.set(name, value);
  }
  const full = given.get('full') === true;
  const save = given.get('save') === true;
  const out = given.get('out') as string | undefined;
  if (out !== undefined && out.trim() === '') throw new UsageError('--out needs a directory');
  if (save && out !== undefined) throw new UsageError('--save writes to bench/results/; --out names another directory: give one of them');
  const opt: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const raw = given.get(name);
    opt[name] = raw === undefined ? defaultOf(spec, full) : parseValue(name, spec, raw);
  }
  return { opt: opt as Values<T>, full, save, help: given.get('help') === true, out };
}

function defaultOf(spec: OptionSpec, full: boolean): unknown {
  switch (spec.kind) {
    case 'flag':
      return false;
    case 'text':
      return spec.quick;
    default:
      return full && spec.full !== undefined ? spec.full : spec.quick;
  }
}

function parseValue(name: string, spec: OptionSpec, raw: string | true): unknown {
  if (raw === true) return true;
  const bad = (want: string) => new UsageError(`--${name} wants ${want}, got '${raw}'`);
  const num = (s: string, int: boolean, min: number) => {
    const n = Number(s);
    if (s.trim() === '' || !Number.isFinite(n) || (int && !Number.isInteger(n)) || n < min) return undefined;
    return n;
  };
  switch (spec.kind) {
    case 'int':
    case 'number': {
      const min = spec.min ?? 1;
      const n = num(raw, spec.kind === 'int', min);
      if (n === undefined) throw bad(`${spec.kind === 'int' ? 'an integer' : 'a number'} ≥ ${min}`);
      return n;
    }
    case 'numbers': {
      const min = spec.min ?? 1;
      const ns = raw.split(',').map((s) => num(s, false, min));
      if (ns.some((n) => n === undefined)) throw bad(`numbers ≥ ${min} separated by commas`);
      return ns;
    }
    case 'list': {
      const names = splitNames(raw, spec.choices);
      if (names.some((s) => s === '')) throw bad('names separated by commas');
      const unknown = spec.choices === undefined ? [] : names.filter((s) => !spec.choices!.includes(s));
      if (unknown.length > 0) throw new UsageError(`--${name}: unknown ${unknown.map((u) => `'${u}'`).join(', ')} (one of: ${spec.choices!.join(', ')})`);
      return names;
    }
    default:
      if (raw === '') throw bad('a value');
      return raw;
  }
}

/**
 * Splits a comma-separated list; with `choices`, a name that itself holds a comma ("valid
 * submission, sender-listed grant") is taken whole (the longest run of pieces that is a choice).
 */
function splitNames(raw: string, choices?: readonly string[]): string[] {
  const pieces = raw.split(',');
  const names: string[] = [];
  for (let i = 0; i < pieces.length; ) {
    let j = pieces.length;
    while (j > i + 1 && !choices?.includes(pieces.slice(i, j).join(',').trim())) j--;
    names.push(pieces.slice(i, j).join(',').trim());
    i = j;
  }
  return names;
}

/** The help text: every option with its quick and --full values, then the common ones. */
export function helpText(name: string, about: string, specs: Record<string, OptionSpec>): string {
  const show = (v: unknown) => (Array.isArray(v) ? v.join(',') : String(v));
  const rows: [string, string][] = Object.entries(specs).map(([k, s]) => {
    const arg = s.kind === 'flag' ? '' : s.kind === 'list' || s.kind === 'numbers' ? ' A,B' : ` ${('arg' in s && s.arg) || 'N'}`;
    let d = '';
    if (s.kind === 'list') {
      const q = s.quick === undefined ? 'all' : show(s.quick);
      const f = s.full === undefined ? (s.quick === undefined ? undefined : 'all') : show(s.full);
      d = f === undefined || f === q ? ` (default ${q})` : ` (default ${q}; --full ${f})`;
      if (s.choices !== undefined) d += `; of: ${s.choices.join(', ')}`;
    } else if (s.kind === 'text') d = s.quick === undefined ? '' : ` (default ${s.quick})`;
    else if (s.kind !== 'flag')
      d = s.full === undefined || show(s.full) === show(s.quick) ? ` (default ${show(s.quick)})` : ` (default ${show(s.quick)}; --full ${show(s.full)})`;
    return [`--${k}${arg}`, s.help + d];
  });
  rows.push(
    ['--full', 'the long run: every default above takes its --full value'],
    ['--out DIR', `where the results go (default ${DEFAULT_OUT})`],
    ['--save', 'write the results to bench/results/ (the committed figures) instead'],
    ['-h, --help', 'this text'],
  );
  const w = Math.max(...rows.map((r) => r[0].length));
  return `npm run ${name} [-- options]\n${about}\n\n${rows.map(([a, b]) => `  ${a.padEnd(w)}  ${b}`).join('\n')}\n`;
}

/** Where results go unless --out or --save says otherwise: outside the repository. */
export const DEFAULT_OUT = join(tmpdir(), 'txgate-bench');

export interface BenchRun<T extends Record<string, OptionSpec>> {
  readonly opt: Values<T>;
  readonly full: boolean;
  /** The results directory (created). */
  readonly outDir: string;
  /** A private temporary directory, removed on exit, whatever ends the run (Ctrl-C too). */
  readonly tmp: string;
  /** Child processes killed on exit. */
  readonly children: ChildProcess[];
  /** Writes a results file; returns its path. */
  write(file: string, text: string): string;
  /** A path the user gave, resolved against the directory the user ran the command in. */
  userPath(p: string): string;
}

/** The directory the user ran the command in (npm run changes to the package root). */
const userDir = () => process.env.INIT_CWD ?? process.cwd();

/**
 * Starts a bench: parses the command line (`--help`: the help text, exit 0; a refused line: one
 * line on stderr, exit 2), creates the temporary directory and removes it (and kills the
 * children) on exit, on SIGINT, SIGTERM and SIGHUP too.
 */
export function startBench<T extends Record<string, OptionSpec>>(name: string, about: string, specs: T, argv = process.argv.slice(2)): BenchRun<T> {
  let parsed: Parsed<T>;
  try {
    parsed = parseBenchArgs(specs, argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${name}: ${e.message} (npm run ${name} -- --help lists the options)\n`);
    process.exit(2);
  }
  if (parsed.help) {
    process.stdout.write(helpText(name, about, specs));
    process.exit(0);
  }
  const outDir = parsed.save ? RESULTS_DIR : parsed.out !== undefined ? resolve(userDir(), parsed.out) : DEFAULT_OUT;
  const tmp = mkdtempSync(join(tmpdir(), `txgate-${name.replace(/[^a-z0-9]+/gi, '-')}-`));
  const children: ChildProcess[] = [];
  process.on('exit', () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
  });
  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)
    process.once(sig, () => {
      process.stderr.write(`${name}: ${sig}: stopped; temporary files removed\n`);
      process.exit(code);
    });
  return {
    opt: parsed.opt,
    full: parsed.full,
    outDir,
    tmp,
    children,
    write(file, text) {
      mkdirSync(outDir, { recursive: true });
      const path = join(outDir, file);
      writeFileSync(path, text);
      return path;
    },
    userPath: (p) => resolve(userDir(), p),
  };
}
