/**
 * The development conditional sequencer's reader (src/dev/conditional-sequencer/rules.ts) fed
 * anything a client or a chain may send: the options, and the chain's answers to the reads. A
 * check ends in a pass or an RpcError (the sequencer's JSON-RPC error), never another throw; and
 * well-formed options that hold against a chain pass, while a slot said to hold a value it does
 * not is -32003. The config reader's `got` and `nearest` (src/base/config-reader.ts) likewise:
 * never a throw, never a long string echoed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { checkConditions, RpcError } from '../../src/dev/conditional-sequencer/rules.js';
import { got, nearest } from '../../src/base/config-reader.js';

const hexOf = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => '0x' + Buffer.from(b).toString('hex'));
const word = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;

describe('the development sequencer: conditions checked, never thrown', () => {
  it('any options against a chain answering anything: a pass or an RpcError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.jsonValue(), fc.anything()), fc.jsonValue(), async (options, answer) => {
        const read = async () => answer;
        const o =
          typeof options === 'object' && options !== null && !Array.isArray(options) ? (options as Record<string, unknown>) : { knownAccounts: options };
        try {
          await checkConditions(read, o);
        } catch (e) {
          assert.ok(e instanceof RpcError, String(e));
          assert.equal(typeof e.code, 'number');
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('well-formed options against a chain: what holds passes; a slot said to hold another value is -32003', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.bigInt({ min: 0n, max: 1n << 40n }),
        fc.bigInt({ min: 0n, max: 1n << 40n }),
        hexOf(20),
        hexOf(32),
        fc.bigInt({ min: 0n, max: (1n << 256n) - 2n }),
        async (number, time, addr, root, slotValue) => {
          const read = async (method: string) => {
            if (method === 'eth_getBlockByNumber') return { number: `0x${number.toString(16)}`, timestamp: `0x${time.toString(16)}` };
            if (method === 'eth_getProof') return { storageHash: root };
            if (method === 'eth_getStorageAt') return word(slotValue);
            throw new Error(`unexpected ${method}`);
          };
          const holds = {
            blockNumberMin: `0x${number.toString(16)}`,
            blockNumberMax: `0x${(number + 5n).toString(16)}`,
            timestampMax: `0x${time.toString(16)}`,
            knownAccounts: { [addr]: root, ['0x' + '11'.repeat(20)]: { [word(0n)]: word(slotValue) } },
          };
          await checkConditions(read, holds);
          const unmet = { knownAccounts: { [addr]: { [word(0n)]: word(slotValue + 1n) } } };
          await assert.rejects(
            checkConditions(read, unmet),
            (e: unknown) => e instanceof RpcError && e.code === -32003 && /failed state check/.test(e.message),
          );
          const passed = { blockNumberMax: `0x${(number > 0n ? number - 1n : 0n).toString(16)}` };
          if (number > 0n)
            await assert.rejects(checkConditions(read, passed), (e: unknown) => e instanceof RpcError && e.code === -32003 && /header check/.test(e.message));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the config reader: what it got, the nearest field', () => {
  it('got: any value, one short line; a string past 32 characters never shown', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        const s = got(v);
        assert.ok(s.startsWith('got ') && s.length <= 4 + 'the string '.length + 2 + 32 * 6 + 2, s);
        if (typeof v === 'string' && v.length > 32) assert.ok(!s.includes(v), s);
      }),
      { numRuns: 2000 },
    );
  });
  it('nearest: a known field or null, never a throw; the field itself when known but for case', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.array(fc.string({ maxLength: 20 }), { maxLength: 20 }), (key, known) => {
        const n = nearest(key, known);
        assert.ok(n === null || known.includes(n));
        const same = known.find((k) => k.toLowerCase() === key.toLowerCase());
        if (same !== undefined && key.length <= 64) assert.equal(n, same);
      }),
      { numRuns: 2000 },
    );
  });
});
