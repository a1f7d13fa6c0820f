/**
 * Property tests: random and mutated bytes, random strings and random JSON into parse and
 * decode over the real server. The answer is always a JSON-RPC error with a stable reason (or,
 * for a mutation that still makes a valid signed transaction, an acceptance): never a 5xx, never
 * a throw that escapes (the server would not answer), never a hang (each request is awaited).
 */
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { REASONS } from '../../src/base/reasons.js';
import { newKey } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { StubSequencer } from '../support/stub-sequencer.js';
import { sign1559, signLegacy } from '../support/txs.js';
import { useGate } from '../support/gate-fixture.js';

let stub: StubSequencer;
const key = newKey();
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

const gate = useGate(async () => {
  stub = await new StubSequencer().start();
  return {
    sequencers: [stub.url],
    accounts: [{ id: 'fuzz', keys: [key], grants: [{ txTypes: [0, 1, 2, 4], rateLimit: { perSecond: 1e6, burst: 1e6 } }] }],
  };
});
after(async () => {
  agent.destroy();
  await stub.stop();
});

const known = new Set(Object.keys(REASONS));
function wellFormed(r: { status: number; json: any; text: string }, allowed: number[]) {
  assert.ok(allowed.includes(r.status), `status ${r.status}: ${r.text}`);
  assert.equal(r.json?.jsonrpc, '2.0', r.text);
  if (r.status !== 200 || r.json.error !== undefined) assert.ok(known.has(r.json.error.data.reason), r.text);
}

describe('fuzzing parse and decode', () => {
  it('random bytes as the signed transaction → 400 with a reason', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 0, maxLength: 300 }), async (bytes) => {
        const r = await rpc(gate.port, 'eth_sendRawTransaction', ['0x' + Buffer.from(bytes).toString('hex')], { key });
        wellFormed(r, [400]);
      }),
      { numRuns: 400 },
    );
  });
  it('random bytes behind each envelope type byte → 400 with a reason', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0x01, 0x02, 0x03, 0x04, 0xc0, 0xf8), fc.uint8Array({ maxLength: 200 }), async (type, bytes) => {
        const r = await rpc(gate.port, 'eth_sendRawTransaction', ['0x' + Buffer.concat([Buffer.from([type]), bytes]).toString('hex')], { key });
        wellFormed(r, [400]);
      }),
      { numRuns: 300 },
    );
  });
  it('mutated signed transactions → a reason, or an acceptance of what is still a valid transaction', async () => {
    const seeds = [await sign1559({}), await signLegacy({})];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...seeds),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        async (seed, flips) => {
          const b = Buffer.from(seed.slice(2), 'hex');
          for (const [pos, v] of flips) b[pos % b.length] = v;
          const r = await rpc(gate.port, 'eth_sendRawTransaction', ['0x' + b.toString('hex')], { key });
          wellFormed(r, [200, 400, 402]);
        },
      ),
      { numRuns: 400 },
    );
  });
  it('random strings and JSON values as the param → 400 with a reason', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 200 }), fc.jsonValue({ maxDepth: 3 })), async (param) => {
        const r = await rpc(gate.port, 'eth_sendRawTransaction', [param], { key });
        wellFormed(r, [400]);
      }),
      { numRuns: 300 },
    );
  });
  it('random bodies → a JSON-RPC answer, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.json({ maxDepth: 4 }),
          fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('latin1')),
        ),
        async (body) => {
          const r = await send({ port: gate.port, headers: { 'content-type': 'application/json', 'x-api-key': key }, body, agent });
          wellFormed(r, [200, 400, 413]);
        },
      ),
      { numRuns: 400 },
    );
  });
  it('the server is still healthy afterwards', async () => {
    assert.equal((await rpc(gate.port, 'eth_chainId', [])).json.result, '0x1237');
  });
});
