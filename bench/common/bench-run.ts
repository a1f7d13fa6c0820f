/**
 * A bench's start: its command line parsed (--help, or one line and exit 2), where its results
 * go, and a temporary directory and child processes that go away however the run ends.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_OUT, helpText, parseBenchArgs, UsageError, type OptionSpec, type Parsed, type Values } from './options.js';
import { RESULTS_DIR } from './paths.js';

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
