/**
 * The README's configuration snippets are the files under examples/: `npm run readme` copies
 * each file between its markers (`<!-- example:NAME:start -->` … `<!-- example:NAME:end -->`,
 * NAME a file in examples/), and a test runs every one of them against anvil, so a snippet
 * pasted from the README is one that ran.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const EXAMPLES_DIR = join(import.meta.dirname, '../../examples');

/** The example files (names in examples/). */
export function exampleFiles(): string[] {
  return readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort();
}

/** The examples the README shows, in its order. */
export function examplesShown(readme: string): string[] {
  return [...readme.matchAll(/<!-- example:([\w.-]+):start -->/g)].map((m) => m[1]!);
}

/** The README with every example block holding its file, fenced as JSON. */
export function renderExamples(readme: string): string {
  return readme.replace(/(<!-- example:([\w.-]+):start -->\n)[\s\S]*?(<!-- example:\2:end -->)/g, (_all, start: string, name: string, end: string) => {
    const text = readFileSync(join(EXAMPLES_DIR, name), 'utf8');
    return `${start}\`\`\`json\n${text.endsWith('\n') ? text : text + '\n'}\`\`\`\n${end}`;
  });
}
