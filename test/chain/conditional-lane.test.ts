/**
 * A conditional submission on a chain with the express lane (docs/conditional.md,
 * docs/express-lane.md), with the real ExpressLaneAuction on anvil, the lane endpoint applying
 * Nitro's rules and checking the submission's `options` (support/express-lane-endpoint.ts), and
 * the test's conditional sequencer as the chain's sequencer: while the round is ours the options
 * ride in the lane's `options`, unchanged; conditions that do not hold never land and the answer
 * never claims they did; a lane refusal that proves the bytes were not sequenced goes to the
 * sequencer as the conditional method, never plainly.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Hex, keccak256 } from 'viem';
import type { Anvil } from '../../src/dev/anvil.js';
import { startConditionalSequencer, type ConditionalSequencer } from '../../src/dev/conditional-sequencer/server.js';
import type { Auction } from '../support/auction.js';
import { knownTo, landedOn, nextLaneTx, OURS, OURS_KEY, startLaneChain } from '../support/express-lane-chain.js';
import type { Endpoint } from '../support/express-lane-endpoint.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { eventually, type Gate, newKey, startGate, TIP } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

/** Not the other express lane tests' senders. */
const SENDER = 2;
const desk = newKey();
const METHOD = 'eth_sendRawTransactionConditional';
const ZERO = `0x${'0'.repeat(64)}`;
const ONE = `0x${'0'.repeat(63)}1`;

let anvil: Anvil;
let auction: Auction;
let endpoint: Endpoint;
let seq: ConditionalSequencer;
let gate: Gate;

async function ourRound(): Promise<void> {
  const s = gate.app.lanes.lanes.status().get(DEV_CHAIN_ID)!;
  if (!s.controlled || s.msUntilRoundEnd < 30_000) {
    await auction.sellNextRound(OURS);
    await auction.moveTo(1, 5);
  }
  await eventually(() => gate.app.lanes.lanes.status().get(DEV_CHAIN_ID)?.controlled === true, 5000);
}
const send = (raw: Hex, options: unknown) => rpc(gate.port, METHOD, [raw, options], { key: desk });
const carried = (raw: Hex) => seq.calls.filter((c) => c.hash === keccak256(raw)).map((c) => c.method);

before(async () => {
  ({ anvil, auction, endpoint } = await startLaneChain());
  seq = await startConditionalSequencer(anvil.url);
  gate = await startGate({
    chainB: false,
    sequencers: [seq.url],
    accounts: [{ id: 'desk', keys: [desk], allowUntipped: true, grants: [{ expressLane: true, conditional: true }] }],
    config: { allowUntipped: true },
    chainA: {
      rpc: anvil.url,
      forward: { timeoutMs: 1500 },
      conditional: { enabled: true, headPollMs: 50 },
      expressLane: { enabled: true, auction: auction.address.toLowerCase(), endpoint: endpoint.url, keyEnv: 'EL_KEY', pollMs: 50, marginMs: 5000 },
    },
    lanes: { env: { EL_KEY: OURS_KEY }, clock: auction.clock },
  });
});

after(async () => {
  await gate?.stop();
  await endpoint?.close();
  await seq?.close();
  await anvil?.stop();
});

describe('conditional submissions through the express lane', () => {
  it('the round ours, the conditions met: the lane carries them in `options`, unchanged; landed, answered express', async () => {
    await ourRound();
    const raw = await nextLaneTx(auction, SENDER);
    const options = { knownAccounts: { [TIP]: { [ZERO]: ZERO } }, blockNumberMax: '0xffffff' };
    const before = endpoint.received.length;
    const r = await send(raw, options);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result, keccak256(raw));
    assert.equal(r.headers['x-txgate-lane'], 'express');
    assert.deepEqual(
      endpoint.received.slice(before).map((s) => s.options),
      [options],
    );
    assert.equal(await landedOn(auction, raw), true);
    assert.deepEqual(carried(raw), [], 'not sent to the sequencer at all');
  });

  it('the round ours, the conditions unmet: dropped by the lane, never landed, never reported accepted (502 with the hash), never sent plainly', async () => {
    await ourRound();
    const raw = await nextLaneTx(auction, SENDER);
    const r = await send(raw, { knownAccounts: { [TIP]: { [ZERO]: ONE } } });
    assert.equal(r.status, 502, r.text);
    assert.equal(r.json.error.data.reason, 'upstream_error');
    assert.equal(r.json.error.data.txHash, keccak256(raw));
    assert.deepEqual(endpoint.dropped, [raw]);
    assert.equal(await knownTo(auction, raw), false);
    assert.deepEqual(carried(raw), []);
  });

  it('the lane refusing (not the controller): the sequencer as the conditional method with the same options, answered plain', async () => {
    await ourRound();
    endpoint.fault = 'lost-control';
    try {
      const raw = await nextLaneTx(auction, SENDER);
      const options = { knownAccounts: { [TIP]: { [ZERO]: ZERO } } };
      const r = await send(raw, options);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.result, keccak256(raw));
      assert.equal(r.headers['x-txgate-lane'], 'plain');
      assert.deepEqual(carried(raw), [METHOD]);
      assert.deepEqual(seq.calls.find((c) => c.hash === keccak256(raw))!.options, options);
      assert.equal(await landedOn(auction, raw), true);
    } finally {
      endpoint.fault = 'none';
    }
  });
});
