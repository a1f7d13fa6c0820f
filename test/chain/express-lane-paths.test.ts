/**
 * The express lane on the paths beyond the plain send, with the real ExpressLaneAuction
 * (@arbitrum/nitro-contracts) on anvil and the lane endpoint applying Nitro's rules
 * (support/express-lane-endpoint.ts): the sync send's `forward` mode (a submission the lane
 * carries is sent through it and answered with its receipt, as the receipt mode does: Nitro has no
 * synchronous lane method; otherwise the sequencer's own sync method), the `ordered` sequence
 * numbers through the forward (gapless, a number refused before it was stored used again), and the
 * tracker told of an acceptance the lane carried (its status followed to the block). No controller
 * key and no API key in any log line.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { type Hex, keccak256 } from 'viem';
import type { Anvil } from '../../src/dev/anvil.js';
import type { Auction } from '../support/auction.js';
import { landedOn, nextLaneTx, OURS, OURS_KEY, startLaneChain } from '../support/express-lane-chain.js';
import type { Endpoint, EndpointFault } from '../support/express-lane-endpoint.js';
import { eventually, newKey } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { connectTxgate } from '../../packages/client/src/index.js';
import { useGate } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

/** Not the other express lane tests' sender: its nonces are this file's alone. */
const SENDER = 5;
const desk = newKey();

let anvil: Anvil;
let auction: Auction;
let endpoint: Endpoint;

const nextTx = () => nextLaneTx(auction, SENDER);
const landed = (raw: Hex) => landedOn(auction, raw);
const controlled = () => eventually(() => gate.app.lanes.lanes.status().get(DEV_CHAIN_ID)?.controlled === true, 5000);
/** Ours, with at least 30 s of the round left (a slow host must not see the round end mid-test): else the next round is sold to us and entered. */
async function ourRound(): Promise<void> {
  const s = gate.app.lanes.lanes.status().get(DEV_CHAIN_ID)!;
  if (!s.controlled || s.msUntilRoundEnd < 30_000) {
    await auction.sellNextRound(OURS);
    await auction.moveTo(1, 5);
  }
  await controlled();
}
type AuditLine = { lane?: string; outcome: string; answer: string; rule?: string; sequencer: string; method?: string; round?: number };
const audits = (raw: Hex, since = 0): AuditLine[] =>
  gate.logs
    .slice(since)
    .filter((l) => l.includes('"audit":"forward"') && l.includes(keccak256(raw)))
    .map((l) => JSON.parse(l) as AuditLine);
const submit = (raw: Hex) => rpc(gate.port, 'eth_sendRawTransaction', [raw], { key: desk });
const syncSubmit = (raw: Hex) => rpc(gate.port, 'eth_sendRawTransactionSync', [raw], { key: desk });

const gate = useGate(async () => {
  ({ anvil, auction, endpoint } = await startLaneChain());
  return {
    chainB: false,
    sequencers: [anvil.url],
    accounts: [{ id: 'desk', keys: [desk], allowUntipped: true, grants: [{ expressLane: true, sync: true }] }],
    config: { allowUntipped: true },
    chainA: {
      rpc: anvil.url,
      forward: { timeoutMs: 1500 },
      sync: { enabled: true, mode: 'forward', maxWaitMs: 5000, syncTimeoutFormat: 'omit' }, // anvil takes the transaction alone
      track: { enabled: true, pollMs: 100 },
      expressLane: {
        enabled: true,
        auction: auction.address.toLowerCase(),
        endpoint: endpoint.url,
        keyEnv: 'EL_KEY',
        pollMs: 50,
        marginMs: 5000,
        sequence: 'ordered',
        backoffMs: 0,
      },
    },
    lanes: { env: { EL_KEY: OURS_KEY }, clock: auction.clock },
  };
});

after(async () => {
  await endpoint?.close();
  await anvil?.stop();
  assert.equal(gate.logs.join('\n').toLowerCase().includes(OURS_KEY.slice(2).toLowerCase()), false, 'the controller key in a log line');
});

describe("the sync send's forward mode on a chain with the express lane", () => {
  it("the round not ours: the sequencer's own sync method, the receipt answered, the lane named plain", async () => {
    assert.equal(gate.app.lanes.lanes.status().get(DEV_CHAIN_ID)!.controlled, false);
    const raw = await nextTx();
    const r = await syncSubmit(raw);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result?.transactionHash, keccak256(raw), r.text);
    assert.equal(r.headers['x-txgate-lane'], 'plain');
    assert.deepEqual(
      audits(raw).map((a) => a.lane),
      ['plain'],
    );
    assert.ok(
      gate.logs.some((l) => l.includes('"audit":"forward"') && l.includes(keccak256(raw)) && l.includes('eth_sendRawTransactionSync')),
      'the sequencer was asked by the sync method',
    );
    assert.equal(endpoint.received.length, 0);
  });

  it('the round ours: sent through the lane (the plain method wrapped), then the receipt from the chain RPC', async () => {
    await ourRound();
    const raw = await nextTx();
    const since = gate.logs.length;
    const r = await syncSubmit(raw);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result.transactionHash, keccak256(raw));
    assert.equal(r.json.result.status, '0x1');
    assert.equal(r.headers['x-txgate-lane'], 'express');
    const lines = audits(raw, since);
    assert.deepEqual(
      lines.map((a) => [a.lane, a.outcome, a.rule]),
      [['express', 'accepted', 'lookup']],
    );
    assert.equal(
      gate.logs.slice(since).some((l) => l.includes(keccak256(raw)) && l.includes('eth_sendRawTransactionSync') && l.includes('"audit":"forward"')),
      false,
      "the sequencer's sync method was not used",
    );
    assert.equal(endpoint.received.length, 1);
    assert.equal(endpoint.received[0]!.signer, OURS);
  });

  it("the client kit's submitSync says which lane carried it", async () => {
    await ourRound();
    const kit = await connectTxgate({ url: `http://127.0.0.1:${gate.port}`, apiKey: desk, chainId: DEV_CHAIN_ID, chainRpcUrl: anvil.url });
    try {
      const raw = await nextTx();
      const out = await kit.submitSync(raw);
      assert.equal(out.kind, 'executed', JSON.stringify(out));
      assert.equal(out.kind === 'executed' ? out.lane : null, 'express');
      assert.equal(out.hash, keccak256(raw));
    } finally {
      await kit.close();
    }
  });
});

describe('ordered sequence numbers through the forward', () => {
  it('gapless within the round; a number refused before it was stored is used again', async () => {
    await ourRound();
    const round = gate.app.lanes.lanes.status().get(DEV_CHAIN_ID)!.round;
    const first = endpoint.received.filter((s) => s.round === round).length;
    const a = await nextTx();
    const ra = await submit(a);
    assert.equal(ra.headers['x-txgate-lane'], 'express', ra.text);
    assert.equal(await landed(a), true);

    // NOT_EXPRESS_LANE_CONTROLLER proves the bytes were not sequenced: the plain path with the same bytes, and the number is free again.
    endpoint.fault = 'lost-control';
    const b = await nextTx();
    const rb = await submit(b);
    endpoint.fault = 'none';
    assert.equal(rb.status, 200, rb.text);
    assert.equal(rb.headers['x-txgate-lane'], 'plain');
    assert.equal(await landed(b), true);

    await controlled();
    const c = await nextTx();
    const rc = await submit(c);
    assert.equal(rc.headers['x-txgate-lane'], 'express', rc.text);
    assert.equal(await landed(c), true);

    const seqs = endpoint.received.filter((s) => s.round === round).map((s) => Number(s.seq));
    // Gapless from 0 in the round (the sync calls above took the first): a took the next number; b's was refused and used again by c.
    assert.deepEqual(seqs.slice(0, first), [...Array(first).keys()]);
    assert.deepEqual(seqs.slice(first), [first, first + 1, first + 1]);
  });
});

describe('faults of the endpoint, through the gate', () => {
  /** One submission in our round while the endpoint has `fault`: its answer (200 with the hash, landed) and its audit lines. */
  async function through(fault: EndpointFault) {
    await ourRound();
    endpoint.fault = fault;
    const raw = await nextTx();
    const since = gate.logs.length;
    const r = await submit(raw);
    endpoint.fault = 'none';
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result, keccak256(raw));
    assert.equal(await landed(raw), true);
    return { lane: r.headers['x-txgate-lane'], lines: audits(raw, since) };
  }

  it('the endpoint reads the bytes, then never answers: the lookup finds them (200 with the hash, express)', async () => {
    const { lane, lines } = await through('timeout-after-read');
    assert.equal(lane, 'express');
    assert.deepEqual(
      lines.map((a) => [a.lane, a.outcome, a.rule]),
      [['express', 'accepted', 'lookup']],
    );
  });

  it('the round changed in flight (BAD_ROUND_NUMBER): the plain path with the same bytes, which land once', async () => {
    const { lane, lines } = await through('wrong-round');
    assert.equal(lane, 'plain');
    assert.deepEqual(
      lines.map((a) => [a.lane, a.outcome, a.answer]),
      [
        ['express', 'not_sent', 'rejected'],
        ['plain', 'accepted', 'accepted'],
      ],
    );
  });
});

describe("/ready's detail", () => {
  it('names each lane: the round, whether it is ours, the controllers the contract names', async () => {
    await ourRound();
    const r = await send({ port: gate.port, method: 'GET', path: '/ready' });
    assert.equal(r.status, 200, r.text);
    const lane = (JSON.parse(r.text) as { expressLane?: Record<string, Record<string, unknown>> }).expressLane?.[String(DEV_CHAIN_ID)];
    assert.ok(lane !== undefined, r.text);
    const status = gate.app.lanes.lanes.status().get(DEV_CHAIN_ID)!;
    assert.equal(lane.round, status.round);
    assert.equal(lane.controlled, true);
    assert.equal(lane.controller, OURS);
    assert.equal(lane.fresh, true);
    assert.equal(r.text.toLowerCase().includes(OURS_KEY.slice(2).toLowerCase()), false);
  });
});

describe('tracking an acceptance the lane carried', () => {
  it('the tracker is told (the endpoint, rule lookup) and follows it to its block', async () => {
    await ourRound();
    const raw = await nextTx();
    const r = await submit(raw);
    assert.equal(r.headers['x-txgate-lane'], 'express', r.text);
    const s = (await eventually(async () => {
      const st = (await rpc(gate.port, 'txgate_getTransactionStatus', [keccak256(raw)], { key: desk })).json.result as Record<string, unknown>;
      return st.status === 'included' ? st : null;
    }, 15_000)) as Record<string, unknown>;
    assert.equal(s.source, 'edge');
    assert.equal(s.sequencer, endpoint.url);
    assert.equal(s.rule, 'lookup');
  });
});
