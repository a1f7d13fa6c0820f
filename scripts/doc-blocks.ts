/**
 * The fenced shell blocks of the README and docs/, each with its `<!-- needs: … -->` mark (the
 * line before its fence), if any: test/chain/docs-commands.test.ts runs every unmarked one and
 * skips the marked ones by name, and the README's Tests section says how many skip (rendered by
 * `npm run readme`, the `skips` block), so the count is never written by hand.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ShellBlock {
  readonly where: string;
  readonly text: string;
  readonly needs: string | null;
}

/** The checkout's root (this file runs from dist/scripts). */
export const ROOT = join(import.meta.dirname, '..', '..');

/** The fenced sh/bash blocks of a page (a path from the root), each with its mark, if any. */
export function shellBlocks(page: string, root = ROOT): ShellBlock[] {
  const lines = readFileSync(join(root, page), 'utf8').split('\n');
  const out: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(sh|bash|shell)\s*$/.exec(lines[i]!);
    if (open === null) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]!); j++) body.push(lines[j]!.slice(indent));
    const needs = /^\s*<!-- needs: (.+?) -->\s*$/.exec(lines[i - 1] ?? '')?.[1] ?? null;
    out.push({ where: `${page}:${i + 1}`, text: body.join('\n'), needs });
    i = j;
  }
  return out;
}

/** The pages whose shell blocks run: the README and every page of docs/. */
export function shellPages(root = ROOT): string[] {
  return [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
}

/** The tests of test/e2e/secp256k1-system.test.ts that skip unless the system binding is built (those that take `{ skip }`). */
export function secp256k1Skips(root = ROOT): number {
  return [...readFileSync(join(root, 'test/e2e/secp256k1-system.test.ts'), 'utf8').matchAll(/\bit\([^\n]*\{ skip \}/g)].length;
}

/** The README's sentence of what a run skips, from the counts. */
export function renderSkips(root = ROOT): string {
  const tests = secp256k1Skips(root);
  const blocks = shellPages(root)
    .flatMap((p) => shellBlocks(p, root))
    .filter((b) => b.needs !== null).length;
  return (
    `A run skips ${tests + blocks} tests. ${tests} skip unless the optional system libsecp256k1 binding was built (\`npm run\n` +
    `build:secp256k1\`, [docs/operations.md](docs/operations.md#configuration)): they compare it with\n` +
    `the default one, which the rest of the suite covers; and ${blocks} shell blocks of the docs that need\n` +
    `more than the development gate (PostgreSQL, root, a chain with the auction contract) skip by\n` +
    `name in \`test/chain/docs-commands.test.ts\`, which runs every other command the docs and \`npm\n` +
    `start\` print (each marked \`<!-- needs: … -->\` before its fence; this count is rendered by \`npm run readme\`).`
  );
}
