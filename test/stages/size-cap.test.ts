/** The size cap stage: the declared size first, then the body read with the cap enforced as it arrives. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REJECT } from '../../src/errors.js';
import type { BodyResult } from '../../src/pipeline/context.js';
import { createSizeCapStage } from '../../src/stages/size-cap.js';
import { given, passed, settled } from '../support/stage-context.js';

describe('size cap stage', () => {
  const stage = createSizeCapStage({ maxBodyBytes: 100 });
  it('refuses a declared size over the cap without reading', () => {
    let read = false;
    const source = { read: () => ((read = true), Promise.resolve('aborted' as const)) };
    const out = given({}, { head: { declaredBytes: 101 }, source }).run(stage);
    assert.equal(out, REJECT.payload_too_large);
    assert.equal(read, false);
  });
  it('413 when the stream went over the cap; client_closed when it left; else the body', async () => {
    const at = (read: BodyResult, declaredBytes = -1) => settled(given({}, { read, head: { declaredBytes } }).run(stage));
    assert.equal(await at('too_large'), REJECT.payload_too_large);
    assert.equal(await at('aborted'), REJECT.client_closed);
    const body = passed(await at({ text: '{}', bytes: 2 }, 5)).body;
    assert.deepEqual(body, { text: '{}', bytes: 2 });
  });
});
