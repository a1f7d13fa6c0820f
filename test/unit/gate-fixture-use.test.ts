/**
 * The test files keep the rules docs/architecture.md (Tests) gives them: every file that starts a
 * txgate registers the gate fixture's key check (test/support/gate-fixture.ts: `useGate`,
 * `useStubGates` or `keysNeverLogged`); a file that starts gates of its own with `startGate`
 * instead of the fixture is one the docs list with why; no test file is over 400 lines.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { lineCount } from '../../scripts/source-rules.js';

const ROOT = join(import.meta.dirname, '../../..');
const MAX_TEST_LINES = 400;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'support' || e.name === 'fixtures' ? [] : testFiles(p);
    return e.name.endsWith('.test.ts') ? [relative(ROOT, p)] : [];
  });
}
const files = testFiles(join(ROOT, 'test')).sort();
const text = (f: string) => readFileSync(join(ROOT, f), 'utf8');
const startsTxgate = (t: string) => /\b(startGate|startCli|runCli|useGate|useStubGates)\(/.test(t);
const usesFixture = (t: string) => /\b(useGate|useStubGates|keysNeverLogged)\(/.test(t) && t.includes("from '../support/gate-fixture.js'");
const ownGates = (t: string) => /\bstartGate\(/.test(t) && !/\b(useGate|useStubGates)\(/.test(t);

/** The files the docs list as starting gates of their own: the paths in the paragraph that introduces them. */
function listedInDocs(): string[] {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const start = doc.indexOf(', and why:', doc.indexOf('Files that start gates of their own'));
  assert.ok(start > 0, 'docs/architecture.md lists the files that start gates of their own');
  const end = doc.indexOf('\n\nNo test file is over', start);
  return [...doc.slice(start, end).matchAll(/`(test\/[a-z0-9-]+\/[\w.-]+\.test\.ts)`/g)].map((m) => m[1]!).sort();
}

describe('the test files and the gate fixture', () => {
  it('the tree was read: test files of every tier', () => {
    for (const tier of ['unit', 'property', 'e2e', 'chain', 'store'])
      assert.ok(
        files.some((f) => f.startsWith(`test/${tier}/`)),
        tier,
      );
  });

  it('every file that starts a txgate registers the fixture and its key check', () => {
    assert.deepEqual(
      files.filter((f) => startsTxgate(text(f)) && !usesFixture(text(f))),
      [],
    );
  });

  it('the files that start gates of their own are exactly those docs/architecture.md lists, and each exists', () => {
    assert.deepEqual(
      files.filter((f) => ownGates(text(f))),
      listedInDocs(),
    );
  });

  it(`no test file over ${MAX_TEST_LINES} lines`, () => {
    assert.deepEqual(
      files.map((f) => `${f}: ${lineCount(text(f))}`).filter((l) => Number(l.split(': ')[1]) > MAX_TEST_LINES),
      [],
    );
  });

  it('the checks see what they are there for: a file starting a gate without the fixture, one with its own gates', () => {
    const bare = "import { startGate } from '../support/harness.js';\nconst g = await startGate({});\n";
    assert.equal(startsTxgate(bare) && !usesFixture(bare), true);
    assert.equal(ownGates(bare), true);
    const fixed = `${bare}import { useGate } from '../support/gate-fixture.js';\nconst h = useGate({});\n`;
    assert.equal(usesFixture(fixed), true);
    assert.equal(ownGates(fixed), false);
  });
});
