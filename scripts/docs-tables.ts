/**
 * `node dist/scripts/docs-tables.js [--check]`: renders the generated blocks in docs/*.md
 * (wherever a page has their markers: the stages, reasons, the configuration fields from their
 * declarations in src/config/config.ts, the metric families from theirs in src/metrics/catalog.ts) with
 * the same renderers as the README's (readme-tables.ts;
 * `npm run readme` renders the README and docs/ together). `--check` writes nothing and exits 1
 * when a page is out of date; test/unit/docs.test.ts makes the same check.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderPage } from './readme-tables.js';

/** `text` with every generated block it has rendered anew (a page without markers is returned as is). */
export const renderDoc = renderPage;

export const DOCS_DIR = join(import.meta.dirname, '../../docs');

/** The pages of docs/, by file name. */
export const docPages = (): string[] => readdirSync(DOCS_DIR).filter((f) => f.endsWith('.md'));

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  let stale = 0;
  for (const name of docPages()) {
    const path = join(DOCS_DIR, name);
    const now = readFileSync(path, 'utf8');
    const next = renderDoc(now);
    if (next === now) continue;
    stale++;
    if (process.argv.includes('--check')) console.error(`docs/${name}: a generated table is out of date: run npm run readme`);
    else {
      writeFileSync(path, next);
      console.log(`docs/${name}: tables rendered`);
    }
  }
  if (stale > 0 && process.argv.includes('--check')) process.exit(1);
}
