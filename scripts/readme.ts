/**
 * `npm run readme`: renders every generated block of README.md and docs/*.md (the stage, reasons
 * and retry tables from the code, the Performance figures from bench/results, the examples/
 * files in their blocks: see readme-tables.ts). `--check` writes nothing and exits 1 when a page
 * is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOCS_DIR, docPages } from './docs-tables.js';
import { renderPage } from './readme-tables.js';

const pages = [join(import.meta.dirname, '../../README.md'), ...docPages().map((name) => join(DOCS_DIR, name))];
const check = process.argv.includes('--check');
let stale = 0;
for (const path of pages) {
  const name = path.slice(join(import.meta.dirname, '../..').length + 1);
  const now = readFileSync(path, 'utf8');
  const next = renderPage(now);
  if (next === now) continue;
  stale++;
  if (check) console.error(`${name}: a generated table or an examples/ block is out of date: run npm run readme`);
  else {
    writeFileSync(path, next);
    console.log(`${name}: tables rendered`);
  }
}
if (check && stale > 0) process.exit(1);
if (stale === 0) console.log('README.md and docs/: up to date');
