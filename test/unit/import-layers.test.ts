/**
 * The layer rule of docs/architecture.md, enforced: no import cycle between files or folders of
 * src/ or of the client package (packages/client/src/), no import into a higher layer, every unit
 * in a layer (scripts/imports.ts, the one declaration of the layers of each).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CLIENT_LAYERS, CLIENT_SRC, checkImports, LAYERS } from '../../scripts/imports.js';

describe('the import layers of src/', () => {
  it('no cycle between files or folders, no import into a higher layer', () => {
    const r = checkImports();
    assert.deepEqual(r.fileCycles, [], 'cycles between files');
    assert.deepEqual(r.unitCycles, [], 'cycles between folders');
    assert.deepEqual(r.upward, [], 'imports into a higher layer');
    assert.ok(r.unitGraph.size > 10, 'the graph was read');
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
      writeFileSync(join(root, 'errors.ts'), "import { x } from './reasons.js';\nexport const e = x;\n");
      writeFileSync(join(root, 'reasons.ts'), "import { e } from './errors.js';\nexport const x = 1, y = e;\n");
      writeFileSync(join(root, 'pipeline/runner.ts'), "import type { S } from '../stages/a.js';\nexport type R = S;\n");
      writeFileSync(join(root, 'stages/a.ts'), 'export type S = 1;\n');
      const r = checkImports(root);
      assert.deepEqual(r.fileCycles, [['errors.ts', 'reasons.ts']]);
      assert.deepEqual(r.upward, ['pipeline/runner.ts -> stages/a.ts']);
      writeFileSync(join(root, 'nowhere.ts'), "import { x } from './reasons.js';\n");
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
