/** The sender stage: where a grant lists senders, the recovered sender must be one of them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAccounts } from '../../../src/accounts/parse.js';
import { type Exit, REJECT } from '../../../src/base/errors.js';
import { keySha256 } from '../../../src/accounts/keys.js';
import { createSenderStage } from '../../../src/stages/sender.js';
import { given, passed } from '../../support/stage-context.js';
import { decoded, grantOf } from '../../support/stage-fixtures.js';

describe('sender stage', () => {
  const stage = createSenderStage();
  it('a grant without a list: nothing recovered (sender() is never called), sender null', () => {
    const tx = decoded({ sender: () => assert.fail('recovered without a list') });
    assert.equal(passed(given({ grant: grantOf('a'), tx }).run(stage)).sender, null);
  });
  it('a listed grant: the listed sender passes (and is kept for the audit line); any other is 403 sender_not_allowed', () => {
    const run = (sender: string | Exit) => given({ grant: grantOf('s'), tx: decoded({ sender: () => sender }) }).run(stage);
    assert.equal(passed(run('0x70997970c51812dc3a010c7d01b50e0d17dc79c8')).sender, '0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
    assert.equal(run('0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc'), REJECT.sender_not_allowed);
    assert.equal(run(REJECT.invalid_signature), REJECT.invalid_signature, 'a signature that does not recover is refused as such');
  });
  it('the accounts file: senders must be a non-empty list of addresses', () => {
    const grant = (senders: unknown) => ({
      accounts: [
        { id: 'x', keySha256: [keySha256('kx')], grants: [{ chainId: 1, rateLimit: { perSecond: 1, burst: 1 }, tipAddresses: [], minTipWei: '0', senders }] },
      ],
    });
    assert.throws(() => parseAccounts(grant([])), /grants\[0\]\.senders: must be a non-empty array/);
    assert.throws(() => parseAccounts(grant(['0x12'])), /grants\[0\]\.senders\[0\]/);
    const listed = parseAccounts(grant(['0x70997970C51812dc3A010C7d01b50e0d17dc79C8'])).accounts[0]!.grants.get(1)!.senders;
    assert.equal(listed?.has('0x70997970c51812dc3a010c7d01b50e0d17dc79c8'), true);
    assert.equal(grantOf('a').senders, null);
  });
});
