/** The grant stage: submission enabled, a grant for the host's chain, and for the sync method a sync grant. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REJECT } from '../../../src/base/errors.js';
import { createGrantStage } from '../../../src/stages/grant.js';
import { PLAIN_SEND } from '../../../src/rpc/send-kind.js';
import { given, passed } from '../../support/stage-context.js';
import { account, chainA, chainB } from '../../support/stage-fixtures.js';

describe('grant stage', () => {
  const grant = createGrantStage();
  const send = PLAIN_SEND;
  const rawTx = '0x02';
  it('the grant of the host chain; 403 disabled; 403 not granted', () => {
    assert.equal(passed(given({ send, rawTx, account: account('a'), chain: chainA }).run(grant)).grant.chainId, 4663);
    assert.equal(given({ send, rawTx, account: account('off'), chain: chainA }).run(grant), REJECT.submission_disabled);
    assert.equal(given({ send, rawTx, account: account('a'), chain: chainB }).run(grant), REJECT.chain_not_granted);
  });
  it('a context without a field the stage reads does not compile (the builder checks stage tests too)', () => {
    // @ts-expect-error: `chain` is missing, and the grant stage reads it (tsc fails on an unused directive)
    assert.throws(() => given({ send, rawTx, account: account('a') }).run(grant), TypeError);
  });
  it('a send the route stage calls sync needs a sync grant', () => {
    assert.equal(given({ send: { kind: 'sync', waitMs: 2000 }, rawTx, account: account('a'), chain: chainA }).run(grant), REJECT.sync_not_granted);
  });
  it('a status query is granted as a submission: the status of nothing is told to an account that may not submit there', () => {
    // The route stage sends a status query on as a plain send (its hash in `statusOf`): the grant's rule, no sync grant needed.
    assert.equal(passed(given({ send, account: account('a'), chain: chainA }).run(grant)).grant.chainId, 4663);
    assert.equal(given({ send, account: account('a'), chain: chainB }).run(grant), REJECT.chain_not_granted);
    assert.equal(given({ send, account: account('off'), chain: chainA }).run(grant), REJECT.submission_disabled);
  });
});
