/**
 * The benches' command line, one parser for all: each bench declares its options (kind, help,
 * quick and --full values); node:util's parseArgs splits the line, and every refusal is one line
 * (a UsageError) that startBench prints before exiting 2.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { roundsProblem } from './figures.js';

/**
 * One option of a bench: its kind, what it does, and its value in the quick run (the default)
 * and in the long run (`--full`; the quick value when absent).
 */
export type OptionSpec =
  | {
      readonly kind: 'int';
      readonly min?: number;
      /** Rounds whose median is the figure: an odd number ≥ 3, anything else refused (figures.ts, roundsProblem). */
      readonly median?: true;
      readonly quick: number;
      readonly full?: number;
      readonly help: string;
      readonly arg?: string;
    }
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

/** Options every bench takes (-h is --help). */
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
  const isFlag = (name: string) => name === 'help' || name === 'full' || name === 'save' || specs[name]?.kind === 'flag';
  const options = Object.fromEntries(
    [...COMMON.filter((n) => n !== 'h'), ...Object.keys(specs)].map((name) => [
      name,
      { type: isFlag(name) ? ('boolean' as const) : ('string' as const), ...(name === 'help' ? { short: 'h' } : {}) },
    ]),
  );
  // Not strict: the tokens are checked here, so that each refusal says what the benches always said.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const given = new Map<string, string | true>();
  for (const t of tokens) {
    if (t.kind === 'positional')
      throw new UsageError(t.value.startsWith('-') ? `unknown option ${t.value}` : `unexpected argument '${t.value}' (options start with --)`);
    if (t.kind === 'option-terminator') throw new UsageError('unknown option --');
    const name = t.name;
    if (!Object.hasOwn(options, name) || (t.rawName.startsWith('-') && !t.rawName.startsWith('--') && name !== 'help'))
      throw new UsageError(`unknown option ${t.rawName}`);
    if (given.has(name)) throw new UsageError(`--${name} given twice`);
    if (isFlag(name)) {
      if (t.value !== undefined) throw new UsageError(`--${name} takes no value`);
      given.set(name, true);
      continue;
    }
    // A value is the rest of --name=value, or the next argument unless it is an option itself.
    if (t.value === undefined || (!t.inlineValue && t.value.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
    given.set(name, t.value);
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
      const noMedian = spec.kind === 'int' && spec.median === true ? roundsProblem(n) : null;
      if (noMedian !== null) throw new UsageError(noMedian);
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
