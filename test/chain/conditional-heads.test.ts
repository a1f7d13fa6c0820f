/**
 * The conditions check reads the chain's one head source (src/upstreams/chain-rpc/chain-heads.ts,
 * docs/conditional.md#what-the-edge-checks-itself), against a real anvil behind the test's
 * conditional sequencer: with `rpcWs` its heads come from the subscription (a bound passed by a
 * block just mined is refused at the edge with the poll's interval at a minute, so no poll read
 * that block), and such a head is fresh when it arrived (once older than `headMaxAgeMs` it
 * refuses nothing: the sequencer decides); with `rpc` only, the poll feeds it.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createPublicClient, http, keccak256, type Hex } from 'viem';
import type { Anvil } from '../../src/dev/anvil.js';
import type { ConditionalSequencer } from '../../src/dev/conditional-sequencer/server.js';
import { startConditionalChain } from '../support/conditional-sequencer.js';
import { useGate } from '../support/gate-fixture.js';
import { eventually, MIN_TIP, newKey, startGate, type Gate } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { signNext } from '../support/txs.js';

const desk = newKey();
const METHOD = 'eth_sendRawTransactionConditional';
/** The conditions stage's freshness bound in the subscription's gate. */
const MAX_AGE_MS = 2000;

let anvil: Anvil;
let seq: ConditionalSequencer;
const gateOn = (chainA: Record<string, unknown>) => ({
  chainB: false,
  sequencers: [seq.url],
  config: { allowUntipped: true },
  accounts: [{ id: 'desk', keys: [desk], allowUntipped: true, grants: [{ conditional: true }] }],
  chainA,
});
// A poll every minute (the most there is): within a test, no poll reads a block mined in it.
const gate = useGate(async () => {
  ({ anvil, seq } = await startConditionalChain(5));
  return gateOn({
    rpc: anvil.url,
    rpcWs: anvil.url.replace(/^http/, 'ws'),
    conditional: { enabled: true, headPollMs: 60_000, headMaxAgeMs: MAX_AGE_MS },
  });
});
after(async () => {
  await seq?.close();
  await anvil?.stop();
});

const number = async () => createPublicClient({ transport: http(anvil.url) }).getBlockNumber();
const mine = (n: number) =>
  fetch(anvil.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: [`0x${n.toString(16)}`] }),
  });
let n = 0;
const fresh = () => signNext(anvil.url, 5, { value: MIN_TIP + BigInt(++n) });
const send = async (g: Gate, raw: Hex, max: bigint) =>
  (await rpc(g.port, METHOD, [raw, { blockNumberMax: `0x${max.toString(16)}` }], { key: desk })).json as {
    result?: string;
    error?: { code: number; data: { reason: string; bound?: string; head?: string } };
  };
/** Refused at the edge for a head of `head` (other bytes each time: a refused probe is never sent). */
const refusedAt = (g: Gate, max: bigint, head: bigint) =>
  eventually(async () => {
    const r = await send(g, await fresh(), max);
    return r.error?.data.reason === 'conditions_expired' && r.error.data.head === `0x${head.toString(16)}` ? r : null;
  }, 10_000);
const carried = (raw: Hex) => seq.calls.filter((c) => c.hash === keccak256(raw)).map((c) => c.method);

describe('with rpcWs: the conditions check reads the subscription', () => {
  it('a blockNumberMax the blocks just mined have passed: -32003 conditions_expired at the edge, the new head in data.head, nothing sent', async () => {
    // The subscription is live once a block mined is told to the edge (the first poll's head is old by now).
    const h = (await eventually(async () => {
      await mine(1);
      const at = await number();
      return (await send(gate, await fresh(), at - 1n)).error?.data.head === `0x${at.toString(16)}` ? at : null;
    }, 10_000))!;
    await mine(3);
    // A bound the new head passed and the head before did not: the next poll is a minute away, so only the subscription told it.
    const r = await refusedAt(gate, h + 1n, h + 3n);
    assert.equal(r!.error!.code, -32003);
    assert.equal(r!.error!.data.bound, 'blockNumberMax');
    const raw = await fresh();
    const again = await send(gate, raw, h + 2n);
    assert.equal(again.error?.data.reason, 'conditions_expired', JSON.stringify(again));
    assert.deepEqual(carried(raw), [], 'nothing refused at the edge reached the sequencer');
  });

  it("a subscription's head is fresh when it arrived: older than headMaxAgeMs (no block since), it refuses nothing and the sequencer decides", async () => {
    await mine(1);
    const h = await number();
    await refusedAt(gate, h - 1n, h);
    // No block, no poll: the head ages past the bound.
    await new Promise((r) => setTimeout(r, MAX_AGE_MS + 500));
    const raw = await fresh();
    const r = await send(gate, raw, h - 1n);
    assert.equal(r.error?.code, -32003, JSON.stringify(r));
    assert.equal(r.error?.data.reason, 'upstream_rejected', 'the sequencer refused it, not the edge');
    assert.deepEqual(carried(raw), [METHOD]);
  });
});

describe('with rpc only: the poll feeds the head', () => {
  it('a blockNumberMax the chain has passed is refused at the edge once a poll has read the block', async () => {
    const g = await startGate(gateOn({ rpc: anvil.url, conditional: { enabled: true, headPollMs: 50 } }));
    try {
      await mine(2);
      const h = await number();
      const r = await refusedAt(g, h - 1n, h);
      assert.equal(r!.error!.code, -32003);
      const raw = await fresh();
      assert.equal((await send(g, raw, h - 1n)).error?.data.reason, 'conditions_expired');
      assert.deepEqual(carried(raw), []);
    } finally {
      await g.stop();
    }
  });
});
