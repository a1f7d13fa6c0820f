/** The fee stage: a tip through an approved pattern, or an untipped plain transfer where both allow it. */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { initCrypto } from '../../../src/base/native.js';
import { createFeeStage, tipVia } from '../../../src/stages/fee.js';
import type { DecodedTx } from '../../../src/tx/types.js';
import { given, passed, reason } from '../../support/stage-context.js';
import { account, CALL_TO, chainA, decoded, grantOf, TIP } from '../../support/stage-fixtures.js';

describe('fee stage', () => {
  before(() => initCrypto());
  const g = grantOf('a');
  const word = (hex: string) => hex.replace(/^0x/, '').padStart(64, '0');
  const call = (receiver: string, amount: bigint, extra = '') => Buffer.from('aabbccdd' + word(amount.toString(16)) + word(receiver) + extra, 'hex');
  const tip = TIP.slice(2);
  it('transfer: a tip address and value ≥ min', () => {
    assert.equal(tipVia(decoded({ to: TIP, value: 100n }), g)?.via, 'transfer');
    assert.equal(tipVia(decoded({ to: TIP, value: 99n }), g), null);
  });
  it('call: contract, selector, receiver word (upper 12 bytes zero) and amount word', () => {
    assert.equal(tipVia(decoded({ to: CALL_TO, data: call(tip, 100n) }), g)?.via, 'call');
    assert.equal(tipVia(decoded({ to: CALL_TO, data: call(tip, 99n) }), g), null);
    assert.equal(tipVia(decoded({ to: CALL_TO, data: call('01' + '00'.repeat(11) + tip, 100n) }), g), null);
    assert.equal(tipVia(decoded({ to: CALL_TO, data: call(tip, 100n).subarray(0, 67) }), g), null);
    assert.equal(tipVia(decoded({ to: '0x2222222222222222222222222222222222222222', data: call(tip, 100n) }), g), null);
  });
  it('the stage passes a tipped transaction with the pattern that paid', () => {
    const run = (tx: DecodedTx) => given({ account: account('a'), grant: g, chain: chainA, tx }).run(createFeeStage({ allowUntipped: true }));
    assert.equal(passed(run(decoded({ to: TIP, value: 100n }))).fee.via, 'transfer');
    assert.equal(reason(run(decoded({ to: TIP, value: 99n }))), 'fee_rejected');
  });
  it('untipped plain transfers only with both permissions', () => {
    const plain = decoded({ to: '0x3333333333333333333333333333333333333333' });
    const run = (deployment: boolean, tx: DecodedTx, who: 'free' | 'a' = 'free') =>
      given({ account: account(who), grant: grantOf(who), chain: chainA, tx }).run(createFeeStage({ allowUntipped: deployment }));
    assert.equal(passed(run(true, plain)).fee.via, 'untipped');
    assert.equal(reason(run(false, plain)), 'fee_rejected');
    assert.equal(reason(run(true, plain, 'a')), 'fee_rejected', 'the account does not allow it');
    assert.equal(reason(run(true, decoded({ to: plain.to, data: Uint8Array.from([1]) }))), 'fee_rejected');
    assert.equal(reason(run(true, decoded({ to: null }))), 'fee_rejected');
  });
});
