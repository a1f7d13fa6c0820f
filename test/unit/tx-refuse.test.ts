/** chain_mismatch names both ids: the one signed for and the host's; a hostile id is shown by its size, never whole. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chainMismatch } from '../../src/tx/refuse.js';

const errorOf = (e: ReturnType<typeof chainMismatch>) => JSON.parse(e.body('1')).error;

describe('chainMismatch', () => {
  it('names both ids, decimal and hex, in the message and in data; the reason and status stay', () => {
    const e = chainMismatch(4663n, 10n);
    assert.deepEqual([e.status, e.reason], [400, 'chain_mismatch']);
    const err = errorOf(e);
    assert.equal(err.message, "Transaction chain id does not match the host's chain: signed for chain 10 (0xa), this host serves chain 4663 (0x1237)");
    assert.deepEqual(err.data, { reason: 'chain_mismatch', chainId: '0x1237', txChainId: '0xa' });
  });
  it('an id of thousands of bits is told by its size, and left out of data past 256 bits', () => {
    const huge = (1n << 4000n) + 5n;
    const err = errorOf(chainMismatch(4663n, huge));
    assert.match(err.message, /signed for chain a 4004-bit number \(0x1000000000000000…\)/);
    assert.ok(err.message.length < 200, err.message);
    assert.equal(err.data.txChainId, undefined);
    assert.equal(errorOf(chainMismatch(1n, (1n << 255n) + 1n)).data.txChainId, '0x8' + '0'.repeat(62) + '1');
  });
});
