/**
 * `node dist/scripts/source-rules.js [--check]`: two rules of the source trees, beside the import
 * layers of imports.ts (docs/architecture.md):
 *
 * - a file of src/ or packages/client/src/ is at most MAX_LINES lines, unless it is a declarative
 *   table listed in TABLES with the reason it is one (a new capability gets a file of its own,
 *   not growth of an existing one);
 * - no re-export (`export { x } from`, `export * from`) in those, bench/ or test/support/ gives a
 *   name a second import path, except in a package entry point (the client package's `exports`
 *   in its package.json).
 *
 * It prints what breaks them (`--check`: only that, and exits 1 when anything does);
 * test/unit/source-rules.test.ts makes the same check in `npm test`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const MAX_LINES = 330;

/** The files allowed over MAX_LINES, by path from the repository root, each with why: declarations, a row each, not logic. */
export const TABLES: Readonly<Record<string, string>> = {
  'src/base/reasons.ts':
    'the reasons table: a row per reason (the stages that give it, status, code, message, what a client does, its retry rule), and the outcome vocabulary the retry rules map to',
  'src/metrics/catalog.ts': 'the metric families: a declaration per family (name, type, labels, help, what an operator reads in it)',
};

export const ROOT = join(import.meta.dirname, '../..');
/** The trees the line limit applies to, from the repository root. */
export const TREES = ['src', 'packages/client/src'] as const;
/** The trees the no-re-export rule applies to: those, and the code benches and tests share. */
export const RE_EXPORT_TREES = [...TREES, 'bench', 'test/support'] as const;

/** Every .ts file under `dir`, as paths from `root`. */
function tsFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) out.push(relative(root, p));
    }
  };
  walk(join(root, dir));
  return out.sort();
}

/** Lines of a text as `wc -l` counts them (a last line without its newline counts too). */
export const lineCount = (text: string): number => (text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0));

/** Files over MAX_LINES that are not listed in `tables`: `path: N lines`. */
export function longFiles(root = ROOT, trees: readonly string[] = TREES, tables: Readonly<Record<string, string>> = TABLES): string[] {
  const out: string[] = [];
  for (const tree of trees)
    for (const f of tsFiles(root, tree)) {
      const n = lineCount(readFileSync(join(root, f), 'utf8'));
      if (n > MAX_LINES && tables[f] === undefined)
        out.push(
          `${f}: ${n} lines (over ${MAX_LINES}: split it by job, or list it in TABLES in scripts/source-rules.ts with why, if it is a declarative table)`,
        );
    }
  return out;
}

/** A re-export statement: `export { … } from`, `export type { … } from`, `export * from`, `export * as x from`. */
const RE_EXPORT = /^\s*export\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s*from\s*['"]([^'"]+)['"]/gm;

/** The client package's entry points (its package.json `exports`), as source paths from the repository root. */
export function entryPoints(root = ROOT): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'packages/client/package.json'), 'utf8')) as { exports?: Record<string, unknown> };
  const out: string[] = [];
  for (const target of Object.values(pkg.exports ?? {})) {
    const file = typeof target === 'string' ? target : (target as { default?: string } | null)?.default;
    const m = file?.match(/^\.\/dist\/(.+)\.js$/);
    if (m) out.push(`packages/client/src/${m[1]}.ts`);
  }
  return out.sort();
}

/** Re-exports outside the entry points: `path: export … from '…'`. */
export function reExports(root = ROOT, trees: readonly string[] = RE_EXPORT_TREES, entries: readonly string[] = entryPoints(root)): string[] {
  const out: string[] = [];
  for (const tree of trees)
    for (const f of tsFiles(root, tree)) {
      if (entries.includes(f)) continue;
      for (const m of readFileSync(join(root, f), 'utf8').matchAll(RE_EXPORT))
        out.push(`${f}: re-exports from '${m[1]}' (import it from where it is declared)`);
    }
  return out;
}

function main(): void {
  const problems = [...longFiles(), ...reExports()];
  for (const p of problems) console.error(p);
  if (!process.argv.includes('--check')) console.log(`${problems.length} problem(s); tables over ${MAX_LINES} lines: ${Object.keys(TABLES).join(', ')}`);
  if (problems.length > 0) process.exit(1);
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) main();
