/**
 * The command-line reader every CLI shares (src/cli-args.ts): each refusal one plain line naming
 * the option, in our words, never node:util's parser wording; what it accepts, node:util's
 * parseArgs reads the same way. test/e2e/cli-errors.test.ts runs each CLI with a bad option.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readCommandLine, UsageError } from '../../src/cli-args.js';

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  tip: { type: 'string', multiple: true },
  pretty: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;
const NODE_WORDING = /Unknown option '|To specify a positional|as in '|ERR_PARSE_ARGS|ambiguous/;

function refusal(args: string[], allowPositionals = false): string {
  try {
    readCommandLine(OPTIONS, { args, allowPositionals });
  } catch (e) {
    assert.ok(e instanceof UsageError, String(e));
    assert.doesNotMatch(e.message, NODE_WORDING);
    assert.doesNotMatch(e.message, /\n/);
    return e.message;
  }
  assert.fail(`accepted: ${args.join(' ')}`);
}

describe('the command-line reader', () => {
  it('refuses in one plain line naming the option', () => {
    const cases: [string[], string][] = [
      [['--bogus-option'], 'unknown option --bogus-option'],
      [['-x'], 'unknown option -x'],
      [['--config'], '--config needs a value'],
      [['-c'], '-c (--config) needs a value'],
      [['--config', '-x'], '--config needs a value (one that starts with a dash is written --config=-x)'],
      [['--config', '--pretty'], '--config needs a value (one that starts with a dash is written --config=--pretty)'],
      [['--pretty=yes'], '--pretty takes no value'],
      [['--config', 'a', '--config', 'b'], '--config given twice'],
      [['stray'], 'unexpected argument "stray"'],
    ];
    for (const [args, message] of cases) assert.equal(refusal(args), message, args.join(' '));
  });
  it('accepts what parseArgs reads, the same way: values, --name=value, a repeated multiple option, short forms, positionals where allowed', () => {
    const r = readCommandLine(OPTIONS, { args: ['--tip=0xA', '--tip', '0xB', '--pretty', '--config=-odd'] });
    assert.deepEqual({ ...r.values }, { config: '-odd', tip: ['0xA', '0xB'], pretty: true });
    assert.equal(readCommandLine(OPTIONS, { args: ['-c', 'f.json'] }).values.config, 'f.json');
    assert.throws(() => readCommandLine(OPTIONS, { args: ['-c', 'a', '-c', 'b'] }), /given twice/);
    const p = readCommandLine(OPTIONS, { args: ['list', '--pretty'], allowPositionals: true });
    assert.deepEqual(p.positionals, ['list']);
  });
});
