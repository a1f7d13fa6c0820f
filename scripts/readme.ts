/**
 * `npm run readme`: renders the README's stage table and reasons table from the code (see
 * readme-tables.ts), and copies the examples/ files into their blocks (readme-examples.ts). `--check` writes nothing and exits 1 when the README is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderReadme } from './readme-tables.js';

const path = join(import.meta.dirname, '../../README.md');
const now = readFileSync(path, 'utf8');
const next = renderReadme(now);
if (process.argv.includes('--check')) {
  if (next !== now) {
    console.error('README.md: the stage or reasons table, or an examples/ block, is out of date: run npm run readme');
    process.exit(1);
  }
} else if (next !== now) {
  writeFileSync(path, next);
  console.log('README.md: tables rendered');
} else console.log('README.md: up to date');
