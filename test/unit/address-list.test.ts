/**
 * address-list.ts: the shared-bytes form of a grant's address lists answers like a Set of its
 * lower-case addresses (short lists and long ones, on both sides of the Set threshold), lists
 * the EIP-55 addresses in the listed order, and crosses threads without a copy (the arrays'
 * memory is shared).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { toChecksumAddress } from '@ethereumjs/util';
import fc from 'fast-check';
import { AddressList } from '../../src/accounts/address-list.js';

const body = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => Buffer.from(b).toString('hex'));

function listOf(lower: readonly string[]): AddressList {
  return AddressList.of(
    lower,
    lower.map((l) => toChecksumAddress('0x' + l).slice(2)),
  );
}

describe('AddressList', () => {
  it('has() answers as a Set of the lower-case addresses, for lists short and long; toArray() lists the EIP-55 addresses in order', () => {
    fc.assert(
      fc.property(fc.uniqueArray(body, { maxLength: 300 }), fc.array(body, { maxLength: 20 }), (listed, others) => {
        const list = listOf(listed);
        const set = new Set(listed.map((l) => '0x' + l));
        assert.equal(list.size, listed.length);
        for (const a of [...listed.map((l) => '0x' + l), ...others.map((l) => '0x' + l)]) assert.equal(list.has(a), set.has(a), a);
        for (const a of listed.slice(0, 3)) {
          assert.equal(list.has('0x' + a.toUpperCase()), false, 'only lower-case addresses match');
          assert.equal(list.has(a), false, 'no 0x: no match');
          assert.equal(list.has('0x' + a.slice(1)), false, 'too short: no match');
        }
        assert.deepEqual(
          list.toArray(),
          listed.map((l) => toChecksumAddress('0x' + l)),
        );
        assert.equal(list.json(), JSON.stringify(list.toArray()));
      }),
      { numRuns: 60 },
    );
  });

  it('an empty list matches nothing and lists []', () => {
    const list = listOf([]);
    assert.equal(list.has('0x' + '0'.repeat(40)), false);
    assert.equal(list.json(), '[]');
  });

  it('crosses a thread boundary sharing its bytes: no copy, the same answers', () => {
    const lower = Array.from({ length: 1000 }, (_, i) => i.toString(16).padStart(40, '0'));
    const list = listOf(lower);
    const { port1, port2 } = new MessageChannel();
    port1.postMessage(list.toWire());
    const got = AddressList.fromWire(receiveMessageOnPort(port2)!.message as ReturnType<AddressList['toWire']>);
    port1.close();
    assert.ok(got.sorted.buffer instanceof SharedArrayBuffer && got.listed.buffer instanceof SharedArrayBuffer);
    got.sorted[0] = 0xff; // the same memory: seen on the sending side too
    assert.equal(list.sorted[0], 0xff);
    got.sorted[0] = 0;
    assert.equal(got.has('0x' + lower[777]!), true);
    assert.equal(got.has('0x' + 'f'.repeat(40)), false);
    assert.equal(got.digest, list.digest);
  });
});
