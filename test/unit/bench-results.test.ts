/**
 * The results files the benches write and the README reads (bench/common/results-schema.ts):
 * every committed run in bench/results/ parses through the schema's reader for its kind, and a
 * file whose shape changed is refused naming the file and the field.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RESULTS_DIR } from '../../bench/common/paths.js';
import { kindOf, parseRun, readRun, resultsJson } from '../../bench/common/results-schema.js';

const committed = readdirSync(RESULTS_DIR)
  .filter((f) => f.endsWith('.json'))
  .map((f) => f.slice(0, -'.json'.length));

describe('the bench results schema', () => {
  it('has committed runs to check', () => {
    assert.ok(committed.length >= 10, committed.join(', '));
    for (const name of ['profile', 'load', 'ws', 'sync-1s', 'sync-0.25s']) assert.ok(committed.includes(name), name);
  });
  for (const name of committed)
    it(`bench/results/${name}.json parses as a ${kindOf(name)} run`, () => {
      const doc = readRun(kindOf(name), name);
      assert.equal(typeof doc, 'object');
    });
  it('refuses a changed shape, naming the file and the first field that does not fit', () => {
    const profile = JSON.parse(readFileSync(join(RESULTS_DIR, 'profile.json'), 'utf8'));
    profile.compared[1].total.candidate = '263k';
    assert.throws(() => parseRun('profile', 'profile', profile), /^Error: bench\/results\/profile\.json: compared\.1\.total\.candidate is not a number$/);
    delete profile.compared;
    assert.throws(() => parseRun('profile', 'profile', profile), /bench\/results\/profile\.json: no compared$/);
    assert.throws(() => parseRun('ws', 'ws', []), /^Error: bench\/results\/ws\.json: is not an object$/);
    assert.throws(() => kindOf('mystery'), /no kind of run by that name/);
  });
  it('a run written by resultsJson reads back as itself', () => {
    const doc = readRun('sync', 'sync-1s');
    assert.deepEqual(parseRun('sync', 'x', JSON.parse(resultsJson('sync', doc))), doc);
  });
});
