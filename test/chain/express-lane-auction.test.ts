/**
 * The express lane against the real ExpressLaneAuction (@arbitrum/nitro-contracts) on anvil:
 * the round and its controller followed from the chain (by time, by resolution, by a transfer
 * mid-round), the start-up check, submissions wrapped only while the controller is ours and sent
 * to an endpoint that applies Nitro's rules and puts what it accepts on the chain; the endpoint's
 * faults read into outcome terms; ordered sequence numbers; two edges sharing the controller.
 * The controller key never appears in any line the lanes wrote or any error they raised.
 */
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Hex } from 'viem';
import type { Account, Grant } from '../../src/accounts/types.js';
import type { Anvil } from '../../src/dev/anvil.js';
import { EXPRESS_LANE_DEFAULTS } from '../support/express-lane-config.js';
import type { Auction } from '../support/auction.js';
import { knownTo, landedOn, nextLaneTx, OURS, OURS_KEY, SENDER, startLaneChain, THEIRS, THEIRS_KEY } from '../support/express-lane-chain.js';
import { type Endpoint, sendToEndpoint } from '../support/express-lane-endpoint.js';
import { eventually } from '../support/harness.js';
import { pendingNonce, sign1559 } from '../support/txs.js';
import { tempDir } from '../support/temp-dir.js';
import { initCrypto } from '../../src/base/native.js';
import { ExpressLanes } from '../../src/express-lane/lanes.js';
import { LaneStartError } from '../../src/express-lane/control.js';
import type { ExpressLane, LaneSubmission } from '../../src/express-lane/lane.js';
import type { LaneReading } from '../../src/express-lane/answer.js';
import { openUpstream } from '../../src/upstreams/registry.js';
import type { Upstream } from '../../src/upstreams/upstream.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const notes: string[] = [];
const errors: string[] = [];

const account = (expressLane: boolean): Account => ({
  id: expressLane ? 'desk' : 'other',
  submissionEnabled: true,
  allowUntipped: true,
  grants: new Map([[DEV_CHAIN_ID, { chainId: DEV_CHAIN_ID, expressLane } as unknown as Grant]]),
});
const GRANTED = account(true);
const UNGRANTED = account(false);

let anvil: Anvil;
let auction: Auction;
let endpoint: Endpoint;
let lanes: ExpressLanes;
let lane: ExpressLane;
let endpointUpstream: Upstream;

/** Sends `sub` to the endpoint and reads its answer as the service does (support: sendToEndpoint), releasing it. */
const laneSend = (sub: LaneSubmission, timeoutMs: number): Promise<LaneReading> => sendToEndpoint(endpointUpstream, sub, timeoutMs);

const config = (over: Record<string, unknown> = {}) => ({
  ...EXPRESS_LANE_DEFAULTS,
  enabled: true,
  auction: auction.address.toLowerCase(),
  endpoint: endpoint.url,
  keyEnv: 'EL_KEY',
  pollMs: 50,
  marginMs: 5000,
  ...over,
});
const open = (over: Record<string, unknown> = {}, key: string = OURS_KEY) =>
  ExpressLanes.open([{ chainId: DEV_CHAIN_ID, rpc: anvil.url, expressLane: config(over) as never }], {
    env: { EL_KEY: key },
    clock: auction.clock,
    note: (m) => notes.push(m),
  });

const nextTx = () => nextLaneTx(auction);
const landed = (raw: Hex) => landedOn(auction, raw);
const known = (raw: Hex) => knownTo(auction, raw);
const controlled = (l: ExpressLane = lane) => eventually(() => l.status().controlled === true, 5000);
const notControlled = (l: ExpressLane = lane) => eventually(() => l.status().controlled === false, 5000);

before(async () => {
  await initCrypto();
  ({ anvil, auction, endpoint } = await startLaneChain());
  lanes = await open();
  lane = lanes.byChain.get(DEV_CHAIN_ID)!;
  endpointUpstream = openUpstream(endpoint.url, { calls: 8, sockets: 1 });
});

after(async () => {
  await lanes?.close();
  await endpointUpstream?.close(true);
  await endpoint?.close();
  await anvil?.stop();
  // In any case, as the other lane tests read it (a key printed upper-case is as leaked).
  const all = [...notes, ...errors].join('\n').toLowerCase();
  for (const k of [OURS_KEY, THEIRS_KEY]) assert.equal(all.includes(k.slice(2).toLowerCase()), false, 'a controller key appeared in a line');
});

describe('express lane on the real auction contract', () => {
  it('start refuses, in one line, a contract that does not answer roundTimingInfo() and a key that is not there', async () => {
    for (const [over, env, want] of [
      [{ auction: '0x000000000000000000000000000000000000dead' }, OURS_KEY, /does not answer roundTimingInfo\(\)/],
      [{}, '', /environment variable EL_KEY is not set/],
      [{}, 'not-a-key', /does not hold a private key/],
    ] as const) {
      const e = await ExpressLanes.open([{ chainId: DEV_CHAIN_ID, rpc: anvil.url, expressLane: config(over) as never }], {
        env: { EL_KEY: env },
        clock: auction.clock,
      }).then(
        () => assert.fail('opened'),
        (x: unknown) => x as Error,
      );
      assert.ok(e instanceof LaneStartError, String(e));
      assert.match(e.message, want);
      assert.match(e.message, /^chains\[0\]\.expressLane: /);
      assert.equal(e.message.includes('\n'), false);
      errors.push(e.message);
    }
    // A key file others may read is refused; the line names the file and its mode, not the key.
    const dir = tempDir('txgate-el-key-');
    const file = join(dir, 'controller.key');
    writeFileSync(file, OURS_KEY);
    chmodSync(file, 0o644);
    const e = await ExpressLanes.open([{ chainId: DEV_CHAIN_ID, rpc: anvil.url, expressLane: config({ keyEnv: null, keyFile: file }) as never }]).then(
      () => assert.fail('opened'),
      (x: unknown) => x as Error,
    );
    assert.match(e.message, /may be read by others \(mode 0644\)/);
    errors.push(e.message);
    chmodSync(file, 0o600);
    const ok = await ExpressLanes.open([{ chainId: DEV_CHAIN_ID, rpc: anvil.url, expressLane: config({ keyEnv: null, keyFile: file }) as never }], {
      clock: auction.clock,
    });
    assert.equal(ok.byChain.get(DEV_CHAIN_ID)!.status().ours, OURS);
    await ok.close();
  });

  it('no controller: nothing is wrapped', async () => {
    const s = lane.status();
    assert.equal(s.controller, null);
    assert.equal(s.controlled, false);
    assert.equal(lanes.submissionFor(DEV_CHAIN_ID, await nextTx(), GRANTED), null);
  });

  it('a round sold to us is ours from its start (by time), to granted accounts only; the lane puts the transaction on the chain', async () => {
    const round = await auction.sellNextRound(OURS);
    await eventually(() => lane.status().nextController === OURS, 5000);
    assert.equal(lane.status().controlled, false, 'the round sold has not begun');
    await auction.moveTo(1, 5);
    await controlled();
    assert.equal(lane.status().round, round);
    assert.equal(lanes.status().get(DEV_CHAIN_ID)!.controller, OURS);
    const raw = await nextTx();
    assert.equal(lanes.submissionFor(DEV_CHAIN_ID, raw, UNGRANTED), null, 'an ungranted account is never wrapped');
    assert.equal(lanes.submissionFor(DEV_CHAIN_ID + 1, raw, GRANTED), null, 'a chain without a lane');
    const sub = lanes.submissionFor(DEV_CHAIN_ID, raw, GRANTED)!;
    assert.equal(sub.round, round);
    assert.equal(sub.seq, (1n << 64n) - 1n);
    const reading = await laneSend(sub, 5000);
    assert.deepEqual(reading, { kind: 'queued' });
    assert.equal(endpoint.received.at(-1)!.signer, OURS, 'the endpoint recovered our controller from the signature');
    assert.equal(await landed(raw), true);
  });

  it('a transfer mid-round takes the lane away; a round sold to another is not ours; a round of ours again by time', async () => {
    const round = lane.status().round;
    await auction.transfer(OURS_KEY, round, THEIRS);
    await notControlled();
    assert.equal(lane.status().controller, THEIRS);
    assert.equal(lanes.submissionFor(DEV_CHAIN_ID, await nextTx(), GRANTED), null);
    // The next round to us, resolved as a second-price auction; then time moves into it.
    await auction.sellNextRound(OURS, true);
    await auction.moveTo(1, 5);
    await controlled();
    // Near the round's end (within marginMs): the plain path.
    await auction.moveTo(0, auction.timing.durationSeconds - 3);
    await notControlled();
    // The round after is nobody's.
    await auction.moveTo(1, 5);
    await notControlled();
    assert.equal(lane.status().controller, null);
  });

  it('a round transferred to us mid-round is ours', async () => {
    await auction.sellNextRound(THEIRS);
    await auction.moveTo(1, 5);
    await notControlled();
    await auction.transfer(THEIRS_KEY, lane.status().round, OURS);
    await controlled();
  });

  it("the endpoint's faults, read into outcome terms", async () => {
    await auction.sellNextRound(OURS);
    await auction.moveTo(1, 5);
    await controlled();
    // Garbage, and null then nothing: not an acceptance; the bytes never landed.
    endpoint.fault = 'garbage';
    let raw = await nextTx();
    assert.deepEqual(await laneSend(lanes.submissionFor(DEV_CHAIN_ID, raw, GRANTED)!, 3000), { kind: 'unknown', why: 'HTTP 200 with a non-JSON body' });
    endpoint.fault = 'null-then-nothing';
    assert.deepEqual(await laneSend(lanes.submissionFor(DEV_CHAIN_ID, raw, GRANTED)!, 3000), { kind: 'queued' });
    assert.equal(await known(raw), false, 'null was only "taken into the queue"');
    // A timeout after reading: unknown, and indeed the bytes landed.
    endpoint.fault = 'timeout-after-read';
    assert.deepEqual(await laneSend(lanes.submissionFor(DEV_CHAIN_ID, raw, GRANTED)!, 500), { kind: 'unknown', why: 'timeout after 500 ms' });
    assert.equal(await landed(raw), true);
    // Lost control: proven not sequenced (the plain path carries the same bytes); the lane stops
    // wrapping this round for backoffMs, or until the contract names a controller again.
    endpoint.fault = 'lost-control';
    raw = await nextTx();
    const r = await laneSend(lanes.submissionFor(DEV_CHAIN_ID, raw, GRANTED)!, 3000);
    assert.deepEqual(r, { kind: 'not-sequenced', code: 'NOT_EXPRESS_LANE_CONTROLLER', lostControl: true });
    assert.equal(await known(raw), false);
    assert.equal(lanes.submissionFor(DEV_CHAIN_ID, raw, GRANTED, auction.clock()), null, 'not wrapped right after the refusal');
    assert.notEqual(lanes.submissionFor(DEV_CHAIN_ID, raw, GRANTED, auction.clock() + 1500), null, 'wrapped again once backoffMs (1 s) passed');
    // An edge with a long backoff resumes when the contract names a controller again (a transfer to ourselves).
    const patient = await open({ backoffMs: 600_000 });
    const p = patient.byChain.get(DEV_CHAIN_ID)!;
    await controlled(p);
    assert.equal((await laneSend(p.submissionFor(raw, GRANTED)!, 3000)).kind, 'not-sequenced');
    assert.equal(p.submissionFor(raw, GRANTED), null);
    endpoint.fault = 'none';
    await auction.transfer(OURS_KEY, lane.status().round, OURS);
    await controlled(p);
    assert.deepEqual(await laneSend(p.submissionFor(raw, GRANTED)!, 3000), { kind: 'queued' });
    assert.equal(await landed(raw), true);
    await patient.close();
  });

  it('a round change in flight: BAD_ROUND_NUMBER proves the bytes were not sequenced; the plain path lands them', async () => {
    const raw = await nextTx();
    const sub = lanes.submissionFor(DEV_CHAIN_ID, raw, GRANTED)!;
    await auction.moveTo(1, 5); // the round ends while the submission is on its way
    const r = await laneSend(sub, 3000);
    assert.equal(r.kind, 'not-sequenced');
    assert.equal(r.kind === 'not-sequenced' && r.code, 'BAD_ROUND_NUMBER');
    assert.equal(await known(raw), false);
    await auction.pub.request({ method: 'eth_sendRawTransaction', params: [raw] } as never);
    assert.equal(await landed(raw), true);
  });

  it('wrong round and a signature by another key are refused by the endpoint as Nitro refuses them', async () => {
    await auction.sellNextRound(OURS);
    await auction.moveTo(1, 5);
    await controlled();
    endpoint.fault = 'wrong-round';
    const r = await laneSend(lanes.submissionFor(DEV_CHAIN_ID, await nextTx(), GRANTED)!, 3000);
    assert.equal(r.kind === 'not-sequenced' && r.code, 'BAD_ROUND_NUMBER');
    endpoint.fault = 'none';
    // Another edge whose key is not the controller: its own lane does not wrap; forced, Nitro's rule refuses it.
    const theirs = await open({}, THEIRS_KEY);
    const their = theirs.byChain.get(DEV_CHAIN_ID)!;
    await eventually(() => their.status().controller === OURS, 5000);
    assert.equal(theirs.submissionFor(DEV_CHAIN_ID, await nextTx(), GRANTED), null);
    await theirs.close();
  });

  it('ordered sequence numbers: gapless per round, reused after a refusal', async () => {
    const ordered = await open({ sequence: 'ordered' });
    const l = ordered.byChain.get(DEV_CHAIN_ID)!;
    await auction.transfer(OURS_KEY, lane.status().round, OURS); // resume after the wrong-round refusal
    await controlled(l);
    const a = await nextTx();
    const s0 = l.submissionFor(a, GRANTED)!;
    assert.equal(s0.seq, 0n);
    assert.deepEqual(await laneSend(s0, 3000), { kind: 'queued' });
    // A refusal before storing (the future limit, say): the number is handed out again.
    endpoint.fault = 'garbage';
    const b = await nextTx();
    const s1 = l.submissionFor(b, GRANTED)!;
    assert.equal(s1.seq, 1n);
    assert.equal((await laneSend(s1, 3000)).kind, 'unknown');
    endpoint.fault = 'none';
    const s1again = l.submissionFor(b, GRANTED)!;
    assert.equal(s1again.seq, 1n, 'no gap: the number whose fate is unknown is used again');
    assert.deepEqual(await laneSend(s1again, 3000), { kind: 'queued' });
    const c = l.submissionFor(await sign1559({ signer: SENDER, nonce: 1 + (await pendingNonce(anvil.url, SENDER)), chainId: DEV_CHAIN_ID }), GRANTED)!;
    assert.equal(c.seq, 2n);
    c.release({ kind: 'queued' });
    assert.equal(await landed(a), true);
    assert.equal(await landed(b), true);
    // A new round starts from 0.
    await auction.sellNextRound(OURS);
    await auction.moveTo(1, 5);
    await controlled(l);
    const d = l.submissionFor(await nextTx(), GRANTED)!;
    assert.equal(d.seq, 0n);
    assert.deepEqual(await laneSend(d, 3000), { kind: 'queued' });
    await ordered.close();
  });

  it('two edges share the controller with "don\'t care" numbers, no coordination', async () => {
    const other = await open();
    const l2 = other.byChain.get(DEV_CHAIN_ID)!;
    // Both edges in control before either wraps: the first may still be holding off after the
    // refusal an earlier test provoked, until it reads the contract's transfer back to us.
    await controlled(lane);
    await controlled(l2);
    // Six transactions at once, half through each edge: each its own connection, no shared counter.
    const nonce = await pendingNonce(anvil.url, SENDER);
    const raws = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => sign1559({ signer: SENDER, nonce: nonce + i, chainId: DEV_CHAIN_ID })));
    const before = endpoint.received.length;
    const readings = await Promise.all(
      raws.map((raw, i) => {
        const l = i % 2 === 0 ? lane : l2;
        return laneSend(l.submissionFor(raw, GRANTED)!, 3000);
      }),
    );
    for (const r of readings) assert.deepEqual(r, { kind: 'queued' });
    // These six, and only these, reached the endpoint: each with "don't care" and our signature.
    const got = endpoint.received.slice(before);
    assert.equal(got.length, 6);
    assert.ok(got.every((x) => x.seq === (1n << 64n) - 1n && x.signer === OURS));
    for (const raw of raws) assert.equal(await landed(raw), true);
    await other.close();
  });
  it('a new round clock (SetRoundTimingInfo) is read again', async () => {
    // The contract allows a new clock only where the current round and the next one's start stay:
    // rounds of 30 s from an offset moved so that both hold (from 35 s into a 60 s round).
    const t = auction.timing;
    await auction.moveTo(0, 35);
    const round = await auction.currentRound();
    const offsetSeconds = t.offsetSeconds + 30 * (round + 1);
    await auction.setTiming({ offsetSeconds, durationSeconds: 30, closingSeconds: 10, reserveSubmissionSeconds: 5 });
    assert.equal(await auction.currentRound(), round);
    await eventually(() => lane.control.timing.durationSeconds === 30, 5000);
    assert.equal(lane.control.timing.offsetSeconds, offsetSeconds);
    assert.equal(lane.status().round, round);
    assert.ok(notes.some((n) => n.includes('the round clock changed')));
    // The rounds that follow are 30 s long: sold and followed as before.
    await auction.sellNextRound(OURS);
    await auction.moveTo(1, 2);
    await controlled();
    assert.equal(lane.status().round, round + 1);
    assert.ok(lane.status().msUntilRoundEnd <= 28_000);
  });
});
