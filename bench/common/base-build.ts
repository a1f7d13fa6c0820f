/**
 * Another build of txgate to measure beside this one (`--base REF` in every bench that compares
 * builds): the commit's tree from git, its server sources compiled, with this checkout's
 * node_modules when the two lockfiles are the same (else its own npm ci). A commit's build never
 * changes, so it is kept under node_modules/.cache/txgate-bench/ and used again by the next run;
 * `--base .` is this checkout's own build.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, TXGATE_CLI } from './paths.js';
import { UsageError } from './options.js';

export interface BaseBuild {
  /** The commit (`.`: this checkout, as built). */
  readonly commit: string;
  /** What the user named it. */
  readonly ref: string;
  /** Its dist/src/cli.js. */
  readonly cli: string;
  /** Its tree's root (for files a bench reads from the base, as a feature's presence). */
  readonly root: string;
}

const git = (...args: string[]) => execFileSync('git', ['-C', REPO, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** The commit `ref` names, or a UsageError saying it names none. */
export function resolveRef(ref: string): string {
  try {
    return git('rev-parse', '--verify', `${ref}^{commit}`);
  } catch {
    throw new UsageError(`--base ${ref}: no such commit in this clone (a branch, tag or commit: git rev-parse ${ref} fails)`);
  }
}

/** Builds (or finds built) the commit `ref` names; `say` is told what takes time. */
export function baseBuild(ref: string, say: (line: string) => void): BaseBuild {
  if (ref === '.') return { commit: '.', ref, cli: TXGATE_CLI, root: REPO };
  const commit = resolveRef(ref);
  const cache = join(REPO, 'node_modules/.cache/txgate-bench');
  const root = join(cache, `base-${commit}`);
  const cli = join(root, 'dist/src/cli.js');
  if (existsSync(cli)) return { commit, ref, cli, root };
  mkdirSync(cache, { recursive: true });
  // Its own folder until built: two runs building the same commit at once each finish theirs, the first rename wins.
  const work = `${root}.tmp-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work);
  say(`building the base ${ref} (${commit.slice(0, 12)}) in ${root}`);
  const archive = spawnSync('sh', ['-c', `git -C "${REPO}" archive "${commit}" | tar -x -C "${work}"`], { encoding: 'utf8' });
  if (archive.status !== 0) throw new Error(`git archive ${commit.slice(0, 12)}: ${archive.stderr.trim()}`);
  const sameLock = readFileSync(join(REPO, 'package-lock.json'), 'utf8') === readFileSync(join(work, 'package-lock.json'), 'utf8');
  if (sameLock) symlinkSync(join(REPO, 'node_modules'), join(work, 'node_modules'));
  else {
    const ci = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: work, encoding: 'utf8' });
    if (ci.status !== 0) throw new Error(`npm ci for the base ${commit.slice(0, 12)}: ${ci.stderr.trim().split('\n').at(-1)}`);
  }
  // The server alone: its sources, no declarations or maps (the base's tests and benches are not run).
  writeFileSync(
    join(work, 'tsconfig.base-build.json'),
    JSON.stringify({ extends: './tsconfig.json', include: ['src'], compilerOptions: { incremental: false, declaration: false, sourceMap: false } }),
  );
  const tsc = spawnSync(process.execPath, [join(work, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.base-build.json'], { cwd: work, encoding: 'utf8' });
  // Type errors against this checkout's packages do not change the server that is emitted: said, and the JavaScript used.
  if (tsc.status !== 0) say(`the base ${commit.slice(0, 12)} built with type errors: ${tsc.stdout.trim().split('\n')[0]}`);
  if (!existsSync(join(work, 'dist/src/cli.js'))) throw new Error(`the base ${commit.slice(0, 12)} did not build`);
  try {
    renameSync(work, root);
  } catch (e) {
    if (!existsSync(cli)) throw e;
    rmSync(work, { recursive: true, force: true }); // another run built it meanwhile
  }
  return { commit, ref, cli, root };
}

/** `baseBuild` for a bench's `--base REF`: the build, or its refusal as the bench's one line and exit 2. */
export function baseBuildOrExit(bench: string, ref: string): BaseBuild {
  try {
    return baseBuild(ref, (line) => process.stderr.write(`${bench}: ${line}\n`));
  } catch (e) {
    process.stderr.write(`${bench}: ${(e as Error).message}\n`);
    process.exit(2);
  }
}
