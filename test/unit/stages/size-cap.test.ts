/** The size cap stage: the declared size first, then the body read with the cap enforced as it arrives. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Exit, REJECT, FAIL } from '../../../src/base/errors.js';
import type { BodyResult } from '../../../src/pipeline/context.js';
import { bodyCapExit, createSizeCapStage } from '../../../src/stages/size-cap.js';
import { given, passed, settled } from '../../support/stage-context.js';
import { store } from '../../support/stage-fixtures.js';

describe('size cap stage', () => {
  const stage = createSizeCapStage({ maxBodyBytes: 100, chainIdMaxBodyBytes: 20 }, store);
  const keyed = { apiKey: 'k1' };
  it('refuses a declared size over the cap without reading', () => {
    let read = false;
    const source = { read: () => ((read = true), Promise.resolve('aborted' as const)) };
    const out = given({}, { head: { declaredBytes: 101, ...keyed }, source }).run(stage);
    assert.equal(out, bodyCapExit(100));
    assert.equal(read, false);
  });
  it("the cap's 413 names the cap and the setting", () => {
    const e = bodyCapExit(100);
    assert.deepEqual([e.status, e.reason], [413, 'payload_too_large']);
    const err = JSON.parse(e.body('1')).error;
    assert.match(err.message, /size limit of 100 bytes \(limits\.maxBodyBytes\)/);
    assert.deepEqual(err.data, { reason: 'payload_too_large', limitBytes: 100, setting: 'limits.maxBodyBytes' });
  });
  it('413 when the stream went over the cap; client_closed when it left; else the body', async () => {
    const at = (read: BodyResult, declaredBytes = -1) => settled(given({}, { read, head: { declaredBytes, ...keyed } }).run(stage));
    assert.equal(await at('too_large'), bodyCapExit(100));
    assert.equal(await at('aborted'), FAIL.client_closed);
    const body = passed(await at({ text: '{}', bytes: 2 }, 5)).body;
    assert.deepEqual(body, { text: '{}', bytes: 2 });
    const over = (await at('overloaded')) as Exit;
    assert.equal(over.reason, 'overloaded');
    assert.equal(over.status, 503);
  });

  it('over the public cap, declared: no key is 413 saying why, a key that does not authenticate is what auth answers; both unread', () => {
    for (const [apiKey, reason, status] of [
      ['', 'payload_too_large', 413],
      ['not-a-key', 'unauthorized', 401],
      ['k2x', 'unauthorized', 401],
    ] as const) {
      let read = false;
      const source = { read: () => ((read = true), Promise.resolve('aborted' as const)) };
      const out = given({}, { head: { declaredBytes: 21, apiKey }, source }).run(stage) as Exit;
      assert.equal(out.reason, reason);
      assert.equal(out.status, status);
      if (apiKey === '') assert.match(out.tail, /Without a valid X-Api-Key only eth_chainId with a body of at most 20 bytes is served/);
      assert.equal(read, false);
    }
    const notLoaded = createSizeCapStage({ maxBodyBytes: 100, chainIdMaxBodyBytes: 20 }, { ...store, ready: false });
    assert.equal(given({}, { head: { declaredBytes: 50, apiKey: 'k1' } }).run(notLoaded), REJECT.not_ready);
    assert.equal((given({}, { head: { declaredBytes: 50, apiKey: '' } }).run(notLoaded) as Exit).status, 413);
  });

  it('over the public cap, chunked: the same answers as declared, once the read passes the public cap', async () => {
    const source = { read: () => Promise.resolve('too_large' as const) };
    const at = async (apiKey: string) => (await settled(given({}, { head: { declaredBytes: -1, apiKey }, source }).run(stage))) as Exit;
    const declared = (apiKey: string) => given({}, { head: { declaredBytes: 21, apiKey }, source }).run(stage) as Exit;
    for (const apiKey of ['', 'not-a-key']) assert.equal(await at(apiKey), declared(apiKey));
    assert.equal((await at('')).status, 413);
    assert.equal((await at('not-a-key')).status, 401);
    assert.equal(await at('k1'), bodyCapExit(100));
  });

  it('without a valid key, a chunked body is read up to the public cap; with one, up to the cap; a small body either way', async () => {
    const caps: number[] = [];
    const source = { read: (cap: number) => (caps.push(cap), Promise.resolve({ text: '{}', bytes: 2 })) };
    for (const [apiKey, declaredBytes] of [
      ['', -1],
      ['k1', -1],
      ['', 20],
      ['', 5],
    ] as const)
      await settled(given({}, { head: { declaredBytes, apiKey }, source }).run(stage));
    assert.deepEqual(caps, [20, 100, 100, 100]);
  });
});
