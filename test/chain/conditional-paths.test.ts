/**
 * eth_sendRawTransactionConditional (docs/conditional.md) on both paths, POST / and the
 * WebSocket transport, against a real anvil behind the test's conditional sequencer
 * (test/support/conditional-sequencer.ts, op-geth's rules): off by default and per grant, the
 * options' shapes, cost and ranges refused at the edge, a bound the head has passed refused at
 * the edge, every condition met and unmet at the sequencer, each of its refusals, and never a
 * plain send of a conditional transaction (the sequencer records the method of every call).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createPublicClient, http, keccak256, type Hex } from 'viem';
import type { Anvil } from '../../src/dev/anvil.js';
import { Calls, type Via } from '../support/conditional-calls.js';
import type { ConditionalSequencer } from '../../src/dev/conditional-sequencer/server.js';
import { startConditionalChain } from '../support/conditional-sequencer.js';
import { useGate } from '../support/gate-fixture.js';
import { eventually, MIN_TIP, newKey, startGate, TIP } from '../support/harness.js';
import { rpc, send as httpSend } from '../support/http.js';
import { SIGNERS, signNext } from '../support/txs.js';

const desk = newKey();
const plainOnly = newKey();
const METHOD = 'eth_sendRawTransactionConditional';
/** The storage root of an account with no storage (eth_getProof's storageHash): keccak256 of the empty trie, rlp(""). */
const EMPTY_ROOT = keccak256('0x80');
const ZERO = `0x${'0'.repeat(64)}`;
const ONE = `0x${'0'.repeat(63)}1`;

let anvil: Anvil;
let seq: ConditionalSequencer;
const gate = useGate(async () => {
  // Some blocks, so that a blockNumberMax below the head exists.
  ({ anvil, seq } = await startConditionalChain(5));
  return {
    chainB: false,
    sequencers: [seq.url],
    config: { allowUntipped: true, websocket: { enabled: true } },
    accounts: [
      { id: 'desk', keys: [desk], allowUntipped: true, grants: [{ conditional: true }] },
      { id: 'plain', keys: [plainOnly], allowUntipped: true },
    ],
    chainA: { rpc: anvil.url, conditional: { enabled: true, maxCost: 10, headPollMs: 50 } },
  };
});
const calls = new Calls(() => gate.port);
after(async () => {
  calls.close();
  await seq?.close();
  await anvil?.stop();
});

const chain = () => createPublicClient({ transport: http(anvil.url) });
const head = async () => chain().getBlock({ blockTag: 'latest' });
/** The calls that carried `raw` to the sequencer, by method. */
const carried = (raw: Hex) => seq.calls.filter((c) => c.hash === keccak256(raw)).map((c) => c.method);
const landed = async (raw: Hex) =>
  (await chain()
    .getTransaction({ hash: keccak256(raw) })
    .catch(() => null)) !== null;
let n = 0;
/** Fresh bytes (a value of their own: a refused transaction's nonce is taken again by the next). */
const fresh = () => signNext(anvil.url, 1, { value: MIN_TIP + BigInt(++n) });

describe('eth_sendRawTransactionConditional: off unless turned on', () => {
  it('a chain that does not turn it on answers 400 method_not_found; a grant without `conditional` 403 conditional_not_granted; nothing sent', async () => {
    const off = await startGate({
      chainB: false,
      sequencers: [seq.url],
      accounts: [{ id: 'desk', keys: [desk], allowUntipped: true, grants: [{ conditional: true }] }],
    });
    try {
      const raw = await fresh();
      const r = await rpc(off.port, METHOD, [raw, {}], { key: desk });
      assert.equal(r.status, 400);
      assert.equal(r.json.error.data.reason, 'method_not_found');
      for (const via of ['http', 'ws'] as Via[]) {
        const g = await calls.call(via, plainOnly, METHOD, [raw, {}]);
        assert.equal(g.status, 403, via);
        assert.equal(g.error!.data.reason, 'conditional_not_granted');
        assert.equal(g.error!.code, -32003);
      }
      assert.deepEqual(carried(raw), []);
    } finally {
      await off.stop();
    }
  });
});

describe('eth_sendRawTransactionConditional: no head, no refusal at the edge', () => {
  it('a chain whose RPC does not answer (no head): a bound long passed is forwarded, and the sequencer refuses it', async () => {
    const blind = await startGate({
      chainB: false,
      sequencers: [seq.url],
      accounts: [{ id: 'desk', keys: [desk], allowUntipped: true, grants: [{ conditional: true }] }],
      chainA: { rpc: 'http://127.0.0.1:9', conditional: { enabled: true, headPollMs: 50 } },
      internal: true,
    });
    try {
      const raw = await fresh();
      const r = await rpc(blind.port, METHOD, [raw, { blockNumberMax: '0x0' }], { key: desk });
      assert.equal(r.json.error.code, -32003);
      assert.equal(r.json.error.data.reason, 'upstream_rejected', 'the sequencer decided, not the edge');
      assert.match(r.json.error.message, /failed header check/);
      assert.deepEqual(carried(raw), [METHOD]);
      const metrics = (await httpSend({ port: blind.internalPort!, method: 'GET', path: '/metrics' })).text;
      assert.match(metrics, /txgate_requests_total\{method="eth_sendRawTransactionConditional",status="200",reason="upstream_rejected",transport="http"\} 1/);
    } finally {
      await blind.stop();
    }
  });
});

for (const via of ['http', 'ws'] as Via[]) {
  describe(`eth_sendRawTransactionConditional over ${via}`, () => {
    const send = (raw: Hex, options: unknown, params?: unknown[]) => calls.call(via, desk, METHOD, params ?? [raw, options]);

    it('refused at the edge, nothing sent: shapes (invalid_params), cost past the cap (-32005), min above max (invalid_params)', async () => {
      const raw = await fresh();
      const bad: unknown[] = [
        'not an object',
        [],
        { blockNumberMax: 12 },
        { blockNumberMax: '0x012' },
        { timestampMax: `0x1${'0'.repeat(16)}` },
        { knownAccounts: { '0x1234': ZERO } },
        { knownAccounts: { [TIP]: '0x1234' } },
        { knownAccounts: { [TIP]: { '0x01': ZERO } } },
        { knownAccounts: { [TIP]: { [ZERO]: 5 } } },
        { knownAccounts: { [TIP]: { balance: 'lots' } } },
        { paysCoinbase: [] },
        { blockNumberMin: '0x9', blockNumberMax: '0x8' },
        { timestampMin: '0x9', timestampMax: '0x8' },
      ];
      for (const options of bad) {
        const r = await send(raw, options);
        assert.equal(r.status, 400, JSON.stringify(options));
        assert.equal(r.error!.data.reason, 'invalid_params', JSON.stringify(options));
        assert.equal(r.error!.code, -32602);
      }
      const missing = await send(raw, undefined, [raw]);
      assert.equal(missing.error!.data.reason, 'invalid_params');
      // The cap is 10 here: 5 accounts with one slot each (2 apiece) and a block range is 11.
      const accounts = Object.fromEntries(SIGNERS.slice(0, 5).map((s) => [s.address, { [ZERO]: ZERO }]));
      const costly = await send(raw, { knownAccounts: accounts, blockNumberMax: '0xffff' });
      assert.equal(costly.status, 400);
      assert.equal(costly.error!.code, -32005);
      assert.equal(costly.error!.data.reason, 'conditions_too_costly');
      assert.equal(costly.error!.data.maxCost, 10);
      const fits = Object.fromEntries(SIGNERS.slice(0, 4).map((s) => [s.address, { [ZERO]: ZERO }]));
      assert.deepEqual(carried(raw), [], 'nothing refused at the edge reached the sequencer');
      const ok = await send(raw, { knownAccounts: fits, blockNumberMax: '0xffff' });
      assert.equal(ok.result, keccak256(raw), JSON.stringify(ok));
    });

    it("a blockNumberMax or timestampMax the chain's head has passed: -32003 conditions_expired at the edge, nothing sent", async () => {
      const h = await head();
      // The edge's head poll has the head once a probe (other bytes) is refused at the edge.
      const probe = await fresh();
      await eventually(
        async () => (await send(probe, { blockNumberMax: `0x${(h.number - 1n).toString(16)}` })).error?.data.reason === 'conditions_expired',
        10_000,
      );
      const raw = await fresh();
      const byNumber = await send(raw, { blockNumberMax: `0x${(h.number - 1n).toString(16)}` });
      assert.equal(byNumber.status, 400);
      assert.equal(byNumber.error!.code, -32003);
      assert.equal(byNumber.error!.data.reason, 'conditions_expired');
      assert.equal(byNumber.error!.data.bound, 'blockNumberMax');
      const byTime = await send(raw, { timestampMax: `0x${(h.timestamp - 1n).toString(16)}` });
      assert.equal(byTime.error!.data.reason, 'conditions_expired');
      assert.equal(byTime.error!.data.bound, 'timestampMax');
      assert.deepEqual(carried(raw), []);
      // The head itself is still live (inclusive bounds): forwarded, and the sequencer decides. The
      // head read again: blocks may have come while the edge's head was awaited above.
      const now = await head();
      const live = await send(raw, { blockNumberMax: `0x${now.number.toString(16)}`, timestampMax: `0x${(now.timestamp + 3600n).toString(16)}` });
      assert.equal(live.result, keccak256(raw), JSON.stringify(live));
      assert.deepEqual(carried(raw), [METHOD]);
    });

    it('every condition met (a root, slots, the special keys, the ranges): accepted by hash, on the chain, carried only as the conditional method with the options unchanged', async () => {
      const raw = await fresh();
      const h = await head();
      const who = SIGNERS[2]!.address;
      const balance = await chain().getBalance({ address: who });
      const nonce = await chain().getTransactionCount({ address: who });
      const options = {
        knownAccounts: { [TIP]: EMPTY_ROOT, [who]: { [ZERO]: ZERO, balance: `0x${balance.toString(16)}`, nonce: `0x${nonce.toString(16)}`, code: '' } },
        blockNumberMin: `0x${h.number.toString(16)}`,
        blockNumberMax: `0x${(h.number + 100n).toString(16)}`,
        timestampMin: '0x1',
        timestampMax: `0x${(h.timestamp + 3600n).toString(16)}`,
      };
      const r = await send(raw, options);
      assert.equal(r.status, 200, JSON.stringify(r));
      assert.equal(r.result, keccak256(raw));
      assert.ok(await landed(raw));
      assert.deepEqual(carried(raw), [METHOD]);
      assert.deepEqual(seq.calls.find((c) => c.hash === keccak256(raw))!.options, options);
    });

    it('each condition unmet at the sequencer: its -32003 passed on (upstream_rejected, its words), not on the chain, never sent plain', async () => {
      const h = await head();
      const unmet: Record<string, unknown>[] = [
        { knownAccounts: { [TIP]: ONE } },
        { knownAccounts: { [TIP]: { [ZERO]: ONE } } },
        { knownAccounts: { [TIP]: { nonce: '0x99' } } },
        { blockNumberMin: `0x${(h.number + 1000n).toString(16)}` },
        { timestampMin: `0x${(h.timestamp + 100_000n).toString(16)}` },
      ];
      for (const options of unmet) {
        const raw = await fresh();
        const r = await send(raw, options);
        assert.equal(r.status, 200, JSON.stringify(options));
        assert.equal(r.error!.code, -32003);
        assert.equal(r.error!.data.reason, 'upstream_rejected');
        assert.match(r.error!.message, /^failed (state|header) check/);
        assert.equal(await landed(raw), false);
        assert.deepEqual(carried(raw), [METHOD], 'one conditional call, no plain send after the refusal');
      }
    });

    it('the sequencer refusing -32005, or not serving the method (-32601): its refusal passed on, never a plain send of the same bytes', async () => {
      for (const [mode, code] of [
        ['limit', -32005],
        ['unserved', -32601],
      ] as const) {
        seq.mode = mode;
        try {
          const raw = await fresh();
          const r = await send(raw, {});
          assert.equal(r.error?.code, code, JSON.stringify(r));
          assert.equal(r.error!.data.reason, 'upstream_rejected');
          if (code === -32601) {
            // The sequencer's answer, named as the sequencer's: not txgate's own method_not_found.
            assert.equal(r.error!.data.from, 'sequencer');
            assert.match(String(r.error!.data.detail), /the chain's sequencer does not serve this method/);
            assert.match(r.error!.message, /does not exist\/is not available/, 'its own words as they came');
          } else assert.equal(r.error!.data.from, undefined);
          assert.equal(await landed(raw), false);
          assert.deepEqual(carried(raw), [METHOD]);
        } finally {
          seq.mode = 'serve';
        }
      }
    });

    it('a plain and a conditional send of the same bytes never share an outcome: refused conditionally, then accepted plain; a refusal of bytes the chain has is an acceptance (by lookup)', async () => {
      const raw = await fresh();
      const unmet = { knownAccounts: { [TIP]: ONE } };
      const refused = await send(raw, unmet);
      assert.equal(refused.error?.code, -32003);
      const plain = await calls.call(via, desk, 'eth_sendRawTransaction', [raw]);
      assert.equal(plain.result, keccak256(raw), 'the plain send is not answered with the conditional refusal');
      assert.ok(await landed(raw));
      const again = await send(raw, unmet);
      assert.equal(again.result, keccak256(raw), 'the chain has the bytes: the refusal is not the answer');
      assert.deepEqual(carried(raw), [METHOD, 'eth_sendRawTransaction', METHOD]);
    });
  });
}
