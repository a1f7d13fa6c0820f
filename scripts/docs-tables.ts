/**
 * `node dist/scripts/docs-tables.js [--check]`: renders the generated tables in docs/*.md (the
 * stage table and the reasons table from the same renderers as the README's (readme-tables.ts),
 * the configuration fields from their declarations in src/config.ts and the metric families from
 * theirs in src/metrics/catalog.ts, wherever a page has their markers). `--check` writes nothing and exits 1 when a page is out of
 * date; test/docs.test.ts makes the same check.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderFieldTable } from '../src/config-fields.js';
import { CONFIG } from '../src/config.js';
import { renderMetricsTable } from '../src/metrics/catalog.js';
import { renderReasons, renderStages } from './readme-tables.js';

/** The generated blocks a page may carry, by marker name. */
export const DOC_BLOCKS: Readonly<Record<string, () => string>> = {
  stages: renderStages,
  reasons: renderReasons,
  config: () => renderFieldTable(CONFIG),
  metrics: renderMetricsTable,
};

/** `text` with every generated block it has rendered anew (a page without markers is returned as is). */
export function renderDoc(text: string): string {
  let out = text;
  for (const [name, render] of Object.entries(DOC_BLOCKS)) {
    const start = out.indexOf(`<!-- ${name}:start -->`);
    const end = out.indexOf(`<!-- ${name}:end -->`);
    if (start < 0 && end < 0) continue;
    if (start < 0 || end < start) throw new Error(`<!-- ${name}:start --> and <!-- ${name}:end --> must both be there, in order`);
    const from = out.indexOf('\n', start) + 1;
    out = `${out.slice(0, from)}${render()}\n${out.slice(end)}`;
  }
  return out;
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const dir = join(import.meta.dirname, '../../docs');
  let stale = 0;
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.md'))) {
    const path = join(dir, name);
    const now = readFileSync(path, 'utf8');
    const next = renderDoc(now);
    if (next === now) continue;
    stale++;
    if (process.argv.includes('--check')) console.error(`docs/${name}: a generated table is out of date: run node dist/scripts/docs-tables.js`);
    else {
      writeFileSync(path, next);
      console.log(`docs/${name}: tables rendered`);
    }
  }
  if (stale > 0 && process.argv.includes('--check')) process.exit(1);
}
