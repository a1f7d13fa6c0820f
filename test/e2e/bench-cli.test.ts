/**
 * The benches' command line (bench/common/options.ts, one parser for all): --help, a refused option or value
 * in one line with exit 2, quick and --full defaults, where results go, and the temporary files
 * removed when a run is stopped with Ctrl-C (SIGINT).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DEFAULT_OUT, parseBenchArgs, UsageError, type OptionSpec } from '../../bench/common/options.js';
import { oneLine } from '../support/one-line.js';

const root = join(import.meta.dirname, '..', '..', '..');
/**
 * Every bench is an npm script (package.json's `bench*`), each running its entry in
 * bench/entry/ (`bash scripts/built.sh bench/entry/NAME`; bench:guard runs the profiler's verdict
 * through scripts/instr-guard.sh), and every entry is an npm script: read from package.json, so a
 * bench added or removed is checked with no change here.
 */
const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const BENCHES: Record<string, string> = Object.fromEntries(
  Object.entries(scripts).flatMap(([name, cmd]) => {
    if (!/^bench(:|$)/.test(name)) return [];
    const entry = /bench\/entry\/([\w-]+)/.exec(cmd)?.[1];
    return entry !== undefined ? [[name, entry]] : [];
  }),
);

describe('every bench is an npm script, and every npm bench script runs an entry', () => {
  it('the entries in bench/entry/ are exactly the npm scripts', () => {
    const entries = readdirSync(join(root, 'bench', 'entry'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.slice(0, -3));
    assert.deepEqual([...new Set(Object.values(BENCHES))].sort(), entries.sort());
    assert.ok(Object.keys(BENCHES).length >= 12, Object.keys(BENCHES).join(', '));
    assert.match(scripts['bench:guard']!, /scripts\/instr-guard\.sh/, "the guard is the profiler's verdict");
  });
});

function bench(file: string, args: string[]) {
  const r = spawnSync(process.execPath, [join(root, 'dist', 'bench', 'entry', `${file}.js`), ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('every bench: --help and refused command lines', () => {
  for (const [name, file] of Object.entries(BENCHES)) {
    it(`${name} --help: the usage with its options, --full, --out and --save; exit 0, nothing run`, () => {
      const r = bench(file, ['--help']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^npm run ${name} \\[-- options\\]`));
      for (const o of ['--full', '--out DIR', '--save', '-h, --help']) assert.ok(r.stdout.includes(o), `${name}: ${o}`);
      assert.doesNotMatch(r.stdout, /written to|\| scenario/);
    });
    it(`${name}: an unknown option: one line on stderr, exit 2`, () => {
      const r = bench(file, ['--frobnicate']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        oneLine(r.stderr, { what: 'an unknown option' }),
        new RegExp(`^${name}: unknown option --frobnicate \\(npm run ${name} -- --help lists the options\\)$`),
      );
      assert.equal(r.stdout, '');
    });
  }
  for (const [name, args, message] of [
    ['run', ['decode'], /unexpected argument 'decode'/],
    ['profile', ['--requests', 'many'], /--requests wants an integer ≥ 1, got 'many'/],
    ['profile', ['--rounds', '4'], /--rounds wants an odd number ≥ 3/],
    ['fleet', ['--seconds', 'x'], /--seconds wants an integer ≥ 1, got 'x'/],
    ['resetting', ['--reset-after', 'never'], /--reset-after: unknown 'never'/],
    ['load', ['--only', 'throughput,speed'], /--only: unknown 'speed'/],
    ['burst', ['--delay', '1e'], /--delay wants an integer ≥ 0, got '1e'/],
    ['ws', ['--save', '--out', 'x'], /give one of them/],
    ['sync', ['--poll', '100,,250'], /--poll wants numbers/],
  ] as const)
    it(`bench:${name} ${args.join(' ')}: malformed, one line, exit 2`, () => {
      const r = bench(name, [...args]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(oneLine(r.stderr, { what: args.join(' ') }), message);
    });
});

describe('the shared option parser', () => {
  const specs = {
    requests: { kind: 'int', quick: 400, full: 2000, help: '' },
    warmup: { kind: 'int', min: 0, quick: 2, help: '' },
    poll: { kind: 'numbers', quick: [100, 250], help: '' },
    only: { kind: 'list', choices: ['a', 'b, with a comma', 'c'], quick: ['a'], help: '' },
    keep: { kind: 'text', help: '' },
    'no-stages': { kind: 'flag', help: '' },
  } satisfies Record<string, OptionSpec>;
  it('quick defaults; --full takes the long values; given values win over both', () => {
    const q = parseBenchArgs(specs, []);
    assert.deepEqual({ ...q.opt }, { requests: 400, warmup: 2, poll: [100, 250], only: ['a'], keep: undefined, 'no-stages': false });
    assert.equal(q.full, false);
    const f = parseBenchArgs(specs, ['--full']);
    assert.equal(f.opt.requests, 2000);
    assert.equal(f.opt.warmup, 2, 'no --full value: the quick one');
    assert.equal(f.full, true);
    const g = parseBenchArgs(specs, ['--full', '--requests=7', '--warmup', '0', '--poll', '5,6.5', '--no-stages', '--keep', 'd']);
    assert.deepEqual({ ...g.opt }, { requests: 7, warmup: 0, poll: [5, 6.5], only: ['a'], keep: 'd', 'no-stages': true });
  });
  it('-h is --help; --name=value and --name value alike; a value may start with one dash', () => {
    assert.equal(parseBenchArgs(specs, ['-h']).help, true);
    assert.equal(parseBenchArgs(specs, ['--help']).help, true);
    assert.deepEqual(parseBenchArgs(specs, ['--keep=a=b']).opt.keep, 'a=b');
    assert.deepEqual(parseBenchArgs(specs, ['--keep', '-d']).opt.keep, '-d');
    assert.throws(() => parseBenchArgs(specs, ['--warmup', '-1']), /--warmup wants an integer ≥ 0, got '-1'/);
  });
  it('a listed name holding a comma is taken whole', () => {
    assert.deepEqual(parseBenchArgs(specs, ['--only', 'b, with a comma,c']).opt.only, ['b, with a comma', 'c']);
  });
  it('refuses a repeated option, a missing value and a value for a flag', () => {
    for (const argv of [
      ['--requests', '1', '--requests', '2'],
      ['--requests'],
      ['--requests', '--full'],
      ['--requests', '2.5'],
      ['--requests=0'],
      ['--no-stages=1'],
      ['--full=yes'],
      ['--warmup', '-1'],
      ['--poll', '1,,2'],
      ['--only', 'a,z'],
      ['--out'],
      ['--out', 'x', '--save'],
      ['-x'],
      ['-hx'],
      ['--'],
      ['--requests='],
      ['stray'],
    ])
      assert.throws(() => parseBenchArgs(specs, argv), UsageError, argv.join(' '));
  });
  it('--out and --save: results outside the repository by default', () => {
    assert.ok(!DEFAULT_OUT.startsWith(root), DEFAULT_OUT);
    assert.equal(parseBenchArgs(specs, ['--out', 'r']).out, 'r');
    assert.equal(parseBenchArgs(specs, ['--save']).save, true);
  });
});

describe('a bench stopped with Ctrl-C', () => {
  it('bench:burst on SIGINT: exits 130, its temporary directory removed and txgate stopped', async () => {
    // Its own temporary root, to see what the bench leaves there.
    const tmp = mkdtempSync(join(tmpdir(), 'txgate-bench-sigint-'));
    const out = mkdtempSync(join(tmpdir(), 'txgate-bench-out-'));
    try {
      // A sequencer that answers after a minute: the burst is in flight when the signal comes.
      const child = spawn(process.execPath, [join(root, 'dist', 'bench', 'entry', 'burst.js'), '--n', '20', '--delay', '60000', '--out', out], {
        env: { ...process.env, TMPDIR: tmp },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      const pid = await new Promise<number>((resolve, reject) => {
        child.stderr.on('data', (d: Buffer) => {
          err += d.toString();
          const m = /txgate \(pid (\d+)\) on port \d+; sending 20 submissions at once/.exec(err); // --n honoured
          if (m !== null) resolve(Number(m[1]));
        });
        child.once('exit', (code) => reject(new Error(`burst exited ${code} before the burst: ${err}`)));
      });
      const dirs = readdirSync(tmp).filter((d) => d.startsWith('txgate-bench-burst-'));
      assert.equal(dirs.length, 1, `its temporary directory, in ${tmp}: ${readdirSync(tmp).join(', ')}`);
      // txgate's own directory (its config) inside the bench's.
      const gateDirs = readdirSync(join(tmp, dirs[0]!)).filter((d) => d.startsWith('txgate-'));
      assert.equal(gateDirs.length, 1, `txgate's directory in ${dirs[0]}`);
      assert.ok(existsSync(join(tmp, dirs[0]!, gateDirs[0]!, 'txgate.json')));
      await new Promise((r) => setTimeout(r, 300));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGINT');
      assert.equal(await exited, 130, err);
      assert.deepEqual(readdirSync(tmp), [], 'nothing left in the temporary root');
      assert.ok(!existsSync(`/proc/${pid}`) || /\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')), 'txgate is not running');
      assert.match(err, /bench:burst: SIGINT: stopped; temporary files removed/);
      assert.deepEqual(readdirSync(out), [], 'no results from a stopped run');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
      rmSync(out, { recursive: true, force: true });
    }
  });
});
