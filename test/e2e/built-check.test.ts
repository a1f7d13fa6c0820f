/**
 * scripts/built.sh (npm start, demo, accounts) compiles only when a compiler input is newer than
 * the last build: a TypeScript source or a tsconfig.json; never for data a run writes (bench
 * results, JSON anywhere in the tree). Run in a copy of the layout with a recording stand-in for
 * tsc, so the test measures the decision, not the compiler. A build says so on stderr, before
 * and after (a first `npm start` builds for a while); a start without one says nothing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../support/temp-dir.js';

const root = join(import.meta.dirname, '..', '..', '..');
const tree = tempDir('txgate-built-');

const put = (path: string, text = '', ageS = 200) => {
  const p = join(tree, path);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, text);
  const t = Date.now() / 1000 - ageS;
  utimesSync(p, t, t);
};
copyFileSync(join(root, 'scripts', 'built.sh'), join(tree, 'x'));
put('scripts/built.sh', readFileSync(join(tree, 'x'), 'utf8'));
put('scripts/prune-dist.sh', readFileSync(join(root, 'scripts', 'prune-dist.sh'), 'utf8'));
// tsc's stand-in: counts its runs.
put('node_modules/typescript/bin/tsc', "require('node:fs').appendFileSync(require('node:path').join(__dirname, 'runs'), 'x');");
put('node_modules/typescript/package.json', '{}');
for (const f of [
  'src/a.ts',
  'scripts/s.ts',
  'bench/b.ts',
  'test/t.ts',
  'packages/client/src/c.ts',
  'tsconfig.json',
  'packages/client/tsconfig.json',
  'bench/results/old.json',
])
  put(f, '');
put('dist/scripts/s.js', "console.log('ran');");
put('packages/client/dist/index.js', '');
put('dist/.tsbuildinfo', '', 100);

const runs = () => {
  const f = join(tree, 'node_modules/typescript/bin/runs');
  return existsSync(f) ? readFileSync(f, 'utf8').length / 2 : 0; // two tsc runs per build
};
const start = () => {
  const before = runs();
  const r = spawnSync('bash', [join(tree, 'scripts/built.sh'), 'scripts/s'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'ran\n');
  if (runs() > before) assert.match(r.stderr, /^txgate: building [^\n]*…\ntxgate: built in \d+ s\n$/, 'a build is said, before and after');
  else assert.equal(r.stderr, '', 'no build: nothing said');
};

describe('scripts/built.sh: what triggers a build', () => {
  it('a built tree starts without compiling', () => {
    start();
    assert.equal(runs(), 0);
  });
  it('bench results and other JSON written after the build: no build', () => {
    put('bench/results/instr.json', '{}', 0);
    put('bench/results/load.json', '{}', 0);
    put('src/data.json', '{}', 0);
    put('.dev/txgate.json', '{}', 0);
    start();
    assert.equal(runs(), 0);
  });
  it('a TypeScript source newer than the build: one build, then none (the build is stamped even when tsc writes nothing)', () => {
    put('bench/b.ts', '', 0);
    start();
    assert.equal(runs(), 1);
    start();
    assert.equal(runs(), 1);
  });
  it('a tsconfig.json newer than the build: a build', () => {
    put('packages/client/tsconfig.json', '', -5);
    start();
    assert.equal(runs(), 2);
  });
});
