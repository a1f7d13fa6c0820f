/** The status stage: a status query (the route stage's `statusOf`) answered by the chain's tracker for the account asking; any other request passes on. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { result } from '../../../src/base/errors.js';
import { createStatusStage } from '../../../src/stages/status.js';
import { given, passed } from '../../support/stage-context.js';
import { account, chainA } from '../../support/stage-fixtures.js';
import { DEV_CHAIN_ID } from '../../../src/dev/dev-setup.js';

describe('status stage', () => {
  it('a status query of a tracked chain is answered here, for the account asking', () => {
    const asked: string[] = [];
    const answer = result('0xaa');
    const stage = createStatusStage(new Map([[DEV_CHAIN_ID, { status: (acc: string, hash: string) => (asked.push(`${acc} ${hash}`), answer) }]]));
    const hash = '0x' + '11'.repeat(32);
    assert.equal(given({ statusOf: hash, account: account('a'), chain: chainA }).run(stage), answer);
    assert.deepEqual(asked, [`a ${hash}`]);
  });
  it('a request that is no status query passes on untouched, the tracker not asked', () => {
    const asked: string[] = [];
    const stage = createStatusStage(new Map([[DEV_CHAIN_ID, { status: () => (asked.push('asked'), result('0x')) }]]));
    const out = passed(given({ statusOf: undefined, account: account('a'), chain: chainA }).run(stage));
    assert.equal(out.statusOf, undefined);
    assert.deepEqual(asked, []);
  });
});
