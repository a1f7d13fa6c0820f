/**
 * Every file of the tree that README.md and docs/*.md name by its path (`src/…`, `docs/…`,
 * `test/…`, `bench/…`, `scripts/…`, `packages/…`, `examples/…`, `native/…`, `deploy/…`) exists,
 * and so does every such path a comment of src/, packages/client/src/ or scripts/ names: a file
 * moved or renamed without its mentions fails here. Built files (`dist/…`) are not the tree's.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '../../..');

/**
 * Files the extension walk-throughs of docs/architecture.md name as made for the check and then
 * deleted (a throw-away stage, transport, store kind and kind of upstream): not the tree's.
 */
const THROWAWAY = new Set(['src/query/front-end.ts', 'src/accounts/once-store.ts', 'src/upstreams/memory/memory-upstream.ts']);

const PATH = /(?<![\w./-])((?:src|docs|test|bench|scripts|packages|examples|native|deploy)\/[\w./-]*\w\.(?:ts|md|json|sh|c|ya?ml|sql|service))\b/g;

/** The paths a text names that are not files of the tree. */
export function missingPaths(text: string, root = ROOT, throwaway: ReadonlySet<string> = THROWAWAY): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(PATH)) if (!throwaway.has(m[1]!) && !existsSync(join(root, m[1]!))) out.add(m[1]!);
  return [...out].sort();
}

const tsFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

describe('paths named in the docs and the code', () => {
  it('every path README.md and docs/*.md name exists', () => {
    const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).flatMap((f) => (f.endsWith('.md') ? [join('docs', f)] : []))];
    assert.ok(pages.length >= 8, 'the pages were read');
    const missing = pages.flatMap((p) => missingPaths(readFileSync(join(ROOT, p), 'utf8')).map((m) => `${p}: ${m}`));
    assert.deepEqual(missing, []);
  });

  it('every path a comment of src/, packages/client/src/ or scripts/ names exists', () => {
    const files = [...tsFiles('src'), ...tsFiles('packages/client/src'), ...tsFiles('scripts')];
    const missing = files.flatMap((f) => missingPaths(readFileSync(join(ROOT, f), 'utf8')).map((m) => `${f}: ${m}`));
    assert.deepEqual(missing, []);
  });

  it('the check finds a path that is not there, and leaves built files, throw-away ones and those that are', () => {
    assert.deepEqual(
      missingPaths('see `src/nowhere.ts` and docs/gone.md, `dist/src/cli.js`, node dist/scripts/imports.js, src/app.ts, src/query/front-end.ts'),
      ['docs/gone.md', 'src/nowhere.ts'],
    );
  });
});
