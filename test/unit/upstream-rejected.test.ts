/** A sequencer's -32601 passed on as it came (upstream_rejected), its data naming the sequencer as the one that lacks the method; other codes unchanged. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { upstreamRejected } from '../../src/base/errors.js';

const errorOf = (code: number, message: string, data?: unknown) => JSON.parse(upstreamRejected(code, message, data).body('1')).error;

describe('upstreamRejected', () => {
  it('-32601: its code and words as they came, data.from the sequencer and what it means', () => {
    const e = errorOf(-32601, 'the method eth_sendRawTransactionConditional does not exist/is not available');
    assert.equal(e.code, -32601);
    assert.equal(e.message, 'the method eth_sendRawTransactionConditional does not exist/is not available');
    assert.equal(e.data.reason, 'upstream_rejected');
    assert.equal(e.data.from, 'sequencer');
    assert.match(e.data.detail, /^the chain's sequencer does not serve this method/);
  });
  it('another code: no such detail, the sequencer data kept', () => {
    const e = errorOf(-32003, 'failed state check', { x: 1 });
    assert.deepEqual(e.data, { reason: 'upstream_rejected', upstream: { x: 1 } });
  });
});
