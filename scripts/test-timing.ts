/**
 * A node:test reporter that writes one line per test file, `<ms>\t<file>`, as each file ends:
 * scripts/test.sh prints the slowest after a run (which files take the suite's time).
 */
import { relative } from 'node:path';

interface Event {
  readonly type: string;
  readonly data?: { readonly name?: string; readonly file?: string; readonly nesting?: number; readonly details?: { readonly duration_ms?: number } };
}

export default async function* timing(source: AsyncIterable<Event>): AsyncGenerator<string> {
  for await (const e of source) {
    const d = e.data;
    // A file's own entry (its process, from start to exit): nesting 0, named by its path.
    if (e.type === 'test:complete' && d?.nesting === 0 && d.file !== undefined && d.name === d.file)
      yield `${Math.round(d.details?.duration_ms ?? 0)}\t${relative(process.cwd(), d.file)}\n`;
  }
}
