/**
 * One command-line reader for every CLI of the project (txgate, npm start, npm run demo,
 * npm run accounts, the benches with options of their own): node:util's parseArgs, with each
 * refusal said in one plain line naming the option (never the parser's own wording), thrown as a
 * UsageError. The caller prints it as `NAME: message` and exits 2 (docs/operations.md "Exit
 * status": 2 bad input or config, 1 a failure at run time).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses `args` against `options`; throws a UsageError with one line for an unknown option, an
 * option without its value (or a flag with one), an option given twice that takes one value,
 * and a positional argument where none is taken.
 */
export function readCommandLine<O extends Options, P extends boolean = false>(
  options: O,
  opts: { readonly args?: readonly string[]; readonly allowPositionals?: P } = {},
): ReturnType<typeof parseArgs<{ options: O; allowPositionals: P }>> {
  const args = [...(opts.args ?? process.argv.slice(2))];
  const positionals = opts.allowPositionals === true;
  const shorts = new Map(Object.entries(options).flatMap(([name, o]) => (o.short === undefined ? [] : [[o.short, name] as const])));
  // Not strict: each token is checked here, so that every refusal is said in our words.
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  const seen = new Set<string>();
  for (const t of tokens) {
    if (t.kind === 'option-terminator') continue;
    if (t.kind === 'positional') {
      if (positionals) continue;
      throw new UsageError(t.value.startsWith('-') ? `unknown option ${t.value}` : `unexpected argument ${JSON.stringify(t.value)}`);
    }
    const short = !t.rawName.startsWith('--');
    const spec = Object.hasOwn(options, t.name) ? options[t.name] : undefined;
    if (spec === undefined || (short && shorts.get(t.rawName.slice(1)) !== t.name)) throw new UsageError(`unknown option ${t.rawName}`);
    const name = short ? `${t.rawName} (--${t.name})` : `--${t.name}`;
    if (spec.type === 'boolean') {
      if (t.value !== undefined) throw new UsageError(`${name} takes no value`);
      continue;
    }
    // A value is the rest of --name=value, or the next argument unless it starts with a dash.
    if (t.value === undefined) throw new UsageError(`${name} needs a value`);
    if (!t.inlineValue && t.value.startsWith('-'))
      throw new UsageError(`${name} needs a value (one that starts with a dash is written --${t.name}=${t.value})`);
    if (spec.multiple !== true && seen.has(t.name)) throw new UsageError(`${name} given twice`);
    seen.add(t.name);
  }
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: positionals as P });
  } catch (e) {
    // Not reached after the checks above; a parser change still ends in one line.
    throw new UsageError((e as Error).message.split('\n')[0]!.replace(/\s+/g, ' '));
  }
}
