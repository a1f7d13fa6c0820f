/**
 * The layer rule of docs/architecture.md, enforced: no import cycle between files or folders of
 * src/, the client package (packages/client/src/), bench/ and test/support/, nor across them; no
 * import into a higher layer; no import into a tree not allowed (bench/ and test/support/ import
 * src/, not each other); every unit in a layer (scripts/imports.ts, the one declaration of the
 * layers of each).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  BENCH_LAYERS,
  CLIENT_LAYERS,
  CLIENT_SRC,
  checkImports,
  checkRepo,
  LAYERS,
  layerOf,
  SRC,
  SUPPORT_LAYERS,
  TREES,
  unitOf,
} from '../../scripts/imports.js';

describe('the import layers of src/', () => {
  it('no cycle between files or folders, no import into a higher layer', () => {
    const r = checkImports();
    assert.deepEqual(r.fileCycles, [], 'cycles between files');
    assert.deepEqual(r.unitCycles, [], 'cycles between folders');
    assert.deepEqual(r.upward, [], 'imports into a higher layer');
    assert.ok(r.unitGraph.size > 10, 'the graph was read');
  });

  it('the top of src/ holds at most 15 files, all of the top layer (the composition root and the process); the rest are folders', () => {
    const top = readdirSync(SRC).filter((f) => f.endsWith('.ts'));
    assert.ok(top.length > 0 && top.length <= 15, `${top.length} files at the top of src/`);
    const last = LAYERS.length - 1;
    assert.deepEqual(
      top.filter((f) => layerOf(unitOf(f)) !== last),
      [],
    );
  });

  it('each unit is in exactly one layer', () => {
    const units = LAYERS.flatMap((l) => l.units);
    assert.equal(new Set(units).size, units.length);
  });

  it('the check finds what it is there for: a cycle, an upward import, a unit in no layer', () => {
    const root = mkdtempSync(join(tmpdir(), 'txgate-imports-'));
    try {
      mkdirSync(join(root, 'pipeline'));
      mkdirSync(join(root, 'stages'));
      mkdirSync(join(root, 'base'));
      writeFileSync(join(root, 'base/errors.ts'), "import { x } from './reasons.js';\nexport const e = x;\n");
      writeFileSync(join(root, 'base/reasons.ts'), "import { e } from './errors.js';\nexport const x = 1, y = e;\n");
      writeFileSync(join(root, 'pipeline/runner.ts'), "import type { S } from '../stages/a.js';\nexport type R = S;\n");
      writeFileSync(join(root, 'stages/a.ts'), 'export type S = 1;\n');
      const r = checkImports(root);
      assert.deepEqual(r.fileCycles, [['base/errors.ts', 'base/reasons.ts']]);
      assert.deepEqual(r.upward, ['pipeline/runner.ts -> stages/a.ts']);
      writeFileSync(join(root, 'nowhere.ts'), "import { x } from './base/reasons.js';\n");
      assert.throws(() => checkImports(root), /nowhere\.ts: in no layer/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the import layers of the client package (packages/client/src/)', () => {
  it('no cycle between files, no import into a higher layer, every file in a layer', () => {
    const r = checkImports(CLIENT_SRC, CLIENT_LAYERS);
    assert.deepEqual(r.fileCycles, [], 'cycles between files');
    assert.deepEqual(r.upward, [], 'imports into a higher layer');
    assert.ok(r.unitGraph.size >= 8, 'the graph was read');
    const units = CLIENT_LAYERS.flatMap((l) => l.units);
    assert.equal(new Set(units).size, units.length);
  });

  it('the check reads the client tree by its own layers: a link importing the kit is upward, a file in no layer refused', () => {
    const root = mkdtempSync(join(tmpdir(), 'txgate-client-imports-'));
    try {
      writeFileSync(join(root, 'link.ts'), "import type { Txgate } from './gate.js';\nexport type L = Txgate;\n");
      writeFileSync(join(root, 'gate.ts'), "import type { L } from './link.js';\nexport type Txgate = L;\n");
      const r = checkImports(root, CLIENT_LAYERS);
      assert.deepEqual(r.fileCycles, [['gate.ts', 'link.ts']]);
      assert.deepEqual(r.upward, ['link.ts -> gate.ts']);
      writeFileSync(join(root, 'stray.ts'), 'export const s = 1;\n');
      assert.throws(() => checkImports(root, CLIENT_LAYERS), /stray\.ts: in no layer \(add it to CLIENT_LAYERS/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the import layers of every tree: src/, the client package, bench/, test/support/', () => {
  it('no cycle between files across the trees, none between folders, no upward import, no import into a tree not allowed', () => {
    const r = checkRepo();
    assert.deepEqual(r.fileCycles, [], 'cycles between files');
    assert.deepEqual(r.across, [], 'imports into a tree not allowed');
    assert.deepEqual([...r.trees.keys()], ['src', 'packages/client/src', 'bench', 'test/support']);
    for (const [tree, t] of r.trees) {
      assert.deepEqual(t.unitCycles, [], `${tree}: cycles between folders`);
      assert.deepEqual(t.upward, [], `${tree}: imports into a higher layer`);
    }
    assert.ok(r.trees.get('bench')!.unitGraph.size >= 6, 'the bench graph was read');
    assert.ok(r.trees.get('test/support')!.unitGraph.size >= 4, 'the test/support graph was read');
    for (const layers of [BENCH_LAYERS, SUPPORT_LAYERS]) {
      const units = layers.flatMap((l) => l.units);
      assert.equal(new Set(units).size, units.length);
    }
    assert.deepEqual(
      TREES.map((t) => [t.dir, t.imports]),
      [
        ['src', []],
        ['packages/client/src', []],
        ['bench', ['src']],
        ['test/support', ['src']],
      ],
    );
  });

  it('the check finds a circle through two trees, a bench importing test/support, an upward bench import, a bench folder in no layer', () => {
    const root = mkdtempSync(join(tmpdir(), 'txgate-repo-imports-'));
    try {
      for (const d of ['src/pipeline', 'src/base', 'bench/common', 'bench/entry', 'test/support']) mkdirSync(join(root, d), { recursive: true });
      writeFileSync(join(root, 'src/base/reasons.ts'), 'export const x = 1;\n');
      writeFileSync(join(root, 'src/pipeline/a.ts'), "import { b } from '../../bench/common/b.js';\nexport const a = b;\n");
      writeFileSync(
        join(root, 'bench/common/b.ts'),
        "import { a } from '../../src/pipeline/a.js';\nimport { e } from '../entry/e.js';\nexport const b = a + e;\n",
      );
      writeFileSync(join(root, 'bench/entry/e.ts'), "import { s } from '../../test/support/harness.js';\nexport const e = s;\n");
      writeFileSync(join(root, 'test/support/harness.ts'), "import { x } from '../../src/base/reasons.js';\nexport const s = x;\n");
      const trees = TREES.filter((t) => t.dir !== 'packages/client/src');
      const r = checkRepo(root, trees);
      assert.deepEqual(r.fileCycles, [['bench/common/b.ts', 'src/pipeline/a.ts']]);
      assert.deepEqual(
        r.across.map((u) => u.split(' (')[0]),
        ['bench/entry/e.ts -> test/support/harness.ts', 'src/pipeline/a.ts -> bench/common/b.ts'],
      );
      assert.deepEqual(r.trees.get('bench')!.upward, ['common/b.ts -> entry/e.ts']);
      assert.deepEqual(r.trees.get('test/support')!.upward, []);
      mkdirSync(join(root, 'bench/stray'));
      writeFileSync(join(root, 'bench/stray/s.ts'), 'export const s = 1;\n');
      assert.throws(() => checkRepo(root, trees), /stray: in no layer \(add it to BENCH_LAYERS/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
