/**
 * The source trees' rules (scripts/source-rules.ts): no file of src/ or packages/client/src/ over
 * MAX_LINES lines unless it is a declarative table listed with why, and no re-export giving a
 * name a second import path outside the client package's entry points.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { entryPoints, lineCount, longFiles, MAX_LINES, RE_EXPORT_TREES, reExports, ROOT, TABLES } from '../../scripts/source-rules.js';

describe('the source rules', () => {
  it('no file over the limit but the listed tables, each listed table a file of the tree with its reason', () => {
    assert.deepEqual(longFiles(), []);
    for (const [file, why] of Object.entries(TABLES)) {
      assert.ok(existsSync(join(ROOT, file)), `${file}: listed in TABLES, not in the tree`);
      assert.ok(why.length > 20, `${file}: says why it is a table`);
    }
  });

  it('no re-export outside the entry points, which are the client package.json exports, in src/, the client package, bench/ and test/support/', () => {
    assert.deepEqual(reExports(), []);
    assert.deepEqual(RE_EXPORT_TREES, ['src', 'packages/client/src', 'bench', 'test/support']);
    assert.deepEqual(entryPoints(), ['packages/client/src/ethers.ts', 'packages/client/src/index.ts', 'packages/client/src/viem.ts']);
  });

  it('the check finds what it is there for: a long file, a re-export, and lets a listed table and an entry point be', () => {
    const root = mkdtempSync(join(tmpdir(), 'txgate-source-rules-'));
    try {
      mkdirSync(join(root, 'src/stages'), { recursive: true });
      const long = 'export const x = 1;\n'.repeat(MAX_LINES + 1);
      writeFileSync(join(root, 'src/stages/big.ts'), long);
      writeFileSync(join(root, 'src/table.ts'), long);
      writeFileSync(join(root, 'src/fits.ts'), 'export const x = 1;\n'.repeat(MAX_LINES));
      writeFileSync(
        join(root, 'src/again.ts'),
        "export {\n  x,\n  y as z,\n} from './fits.js';\nexport type { T } from './t.js';\nexport * from './fits.js';\n",
      );
      writeFileSync(join(root, 'src/entry.ts'), "export { x } from './fits.js';\n");
      mkdirSync(join(root, 'bench/common'), { recursive: true });
      writeFileSync(join(root, 'bench/common/lib.ts'), "export { RESULTS_DIR } from './paths.js';\n");
      const problems = longFiles(root, ['src'], { 'src/table.ts': 'a table, a row a line' });
      assert.equal(problems.length, 1);
      assert.match(problems[0]!, /^src\/stages\/big\.ts: 331 lines/);
      assert.deepEqual(
        reExports(root, ['src', 'bench'], ['src/entry.ts']).map((p) => p.split(':')[0]),
        ['src/again.ts', 'src/again.ts', 'src/again.ts', 'bench/common/lib.ts'],
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('counts lines as wc -l does', () => {
    assert.equal(lineCount(''), 0);
    assert.equal(lineCount('a\n'), 1);
    assert.equal(lineCount('a\nb'), 2);
    assert.equal(lineCount('a\n\n'), 2);
  });
});
