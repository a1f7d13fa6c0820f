/**
 * The express lane wired end to end: txgate in front of anvil with the real ExpressLaneAuction
 * (@arbitrum/nitro-contracts) and a lane endpoint applying Nitro's rules. A granted account's
 * submission takes the lane while txgate's controller holds the round (it lands; 200 with the
 * hash; the audit line and `X-Txgate-Lane` say express) and the plain path otherwise (the round
 * not ours, an ungranted account: never wrapped); a refusal proving the bytes were not sequenced
 * falls back to the plain path; `null` then nothing is decided by the lookup (502 uncertain with
 * the hash); the WebSocket transport and the sync send's receipt mode go through the same rule; two
 * edges share the controller with don't-care numbers. No controller key and no API key appears in
 * any gate's log line.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Hex, keccak256 } from 'viem';
import WebSocket from 'ws';
import { type Anvil, startAnvil } from '../../src/dev/anvil.js';
import { type Auction, deployAuction } from '../support/auction.js';
import { knownTo, landedOn, nextLaneTx, OURS, OURS_KEY, startLaneChain } from '../support/express-lane-chain.js';
import type { Endpoint } from '../support/express-lane-endpoint.js';
import { accountsDoc, eventually, type Gate, newKey, startGate } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { freePort } from '../../src/base/free-port.js';
import { runCli } from '../support/processes.js';
import { classify } from '../../packages/client/src/submission.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { oneLine } from '../support/one-line.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const desk = newKey();
const other = newKey();

let anvil: Anvil;
let auction: Auction;
let endpoint: Endpoint;
let gate: Gate;
let twin: Gate;

const gateOf = () =>
  startGate({
    chainB: false,
    sequencers: [anvil.url],
    accounts: [
      { id: 'desk', keys: [desk], allowUntipped: true, grants: [{ expressLane: true, sync: true }] },
      { id: 'other', keys: [other], allowUntipped: true, grants: [{ sync: true }] },
    ],
    config: { allowUntipped: true, websocket: { enabled: true } },
    chainA: {
      rpc: anvil.url,
      forward: { timeoutMs: 1500 },
      sync: { enabled: true, mode: 'receipt', maxWaitMs: 5000, pollMs: 50 },
      expressLane: { enabled: true, auction: auction.address.toLowerCase(), endpoint: endpoint.url, keyEnv: 'EL_KEY', pollMs: 50, marginMs: 5000 },
    },
    lanes: { env: { EL_KEY: OURS_KEY }, clock: auction.clock },
  });

const nextTx = () => nextLaneTx(auction);
const landed = (raw: Hex) => landedOn(auction, raw);
const known = (raw: Hex) => knownTo(auction, raw);
const controlled = (g: Gate) => eventually(() => g.app.lanes.lanes.status().get(DEV_CHAIN_ID)?.controlled === true, 5000);
/** The forward audit lines of `raw` from line `since` on (a transaction that never landed is signed again with the same nonce: the same bytes). */
const audits = (g: Gate, raw: Hex, since = 0) =>
  g.logs
    .slice(since)
    .filter((l) => l.includes('"audit":"forward"') && l.includes(keccak256(raw)))
    .map((l) => JSON.parse(l) as { lane?: string; outcome: string; answer: string; rule?: string; sequencer: string });
const submit = (g: Gate, raw: Hex, key = desk) => rpc(g.port, 'eth_sendRawTransaction', [raw], { key });

before(async () => {
  ({ anvil, auction, endpoint } = await startLaneChain());
  gate = await gateOf();
  twin = await gateOf();
});

after(async () => {
  await Promise.all([gate?.stop(), twin?.stop()]);
  await endpoint?.close();
  await anvil?.stop();
  for (const g of [gate, twin])
    assert.equal(g.logs.join('\n').toLowerCase().includes(OURS_KEY.slice(2).toLowerCase()), false, 'the controller key in a log line');
});

describe('the express lane, wired', () => {
  it('the round not ours: a granted submission takes the plain path (header and audit line say plain)', async () => {
    assert.equal(gate.app.lanes.lanes.status().get(DEV_CHAIN_ID)!.controlled, false);
    const raw = await nextTx();
    const r = await submit(gate, raw);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result, keccak256(raw));
    assert.equal(r.headers['x-txgate-lane'], 'plain');
    assert.deepEqual(
      audits(gate, raw).map((a) => a.lane),
      ['plain'],
    );
    assert.equal(endpoint.received.length, 0);
    assert.equal(await landed(raw), true);
  });

  it('the round ours: a granted submission takes the lane and lands; an ungranted one is never wrapped', async () => {
    await auction.sellNextRound(OURS);
    await auction.moveTo(1, 5);
    await controlled(gate);
    const raw = await nextTx();
    const r = await submit(gate, raw);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result, keccak256(raw));
    assert.equal(r.headers['x-txgate-lane'], 'express');
    // The client kit says which lane carried it.
    assert.deepEqual(classify({ kind: 'result', result: r.json.result, status: r.status, headers: r.headers }, keccak256(raw)), {
      kind: 'accepted',
      hash: keccak256(raw),
      lane: 'express',
    });
    const lines = audits(gate, raw);
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.equal(lines[0]!.lane, 'express');
    assert.equal(lines[0]!.outcome, 'accepted');
    assert.equal(lines[0]!.rule, 'lookup');
    assert.equal(endpoint.received.length, 1);
    assert.equal(endpoint.received[0]!.signer, OURS);
    assert.equal(await landed(raw), true);

    const plain = await nextTx();
    const p = await submit(gate, plain, other);
    assert.equal(p.status, 200, p.text);
    assert.equal(p.headers['x-txgate-lane'], 'plain');
    assert.equal(endpoint.received.length, 1, 'an ungranted account is never wrapped');
    assert.equal(await landed(plain), true);

    const snap = gate.app.metrics!.snapshot();
    const value = (name: string, labels: Record<string, string>) =>
      snap.find((f) => f.name === name)?.values.find((v) => Object.entries(labels).every(([k, x]) => String((v.labels as Record<string, unknown>)[k]) === x))
        ?.value;
    assert.equal(value('txgate_express_lane_controlled', { chain: String(DEV_CHAIN_ID) }), 1);
    assert.equal(value('txgate_express_lane_round', { chain: String(DEV_CHAIN_ID) }), gate.app.lanes.lanes.status().get(DEV_CHAIN_ID)!.round);
    assert.equal(value('txgate_forwards_total', { chain: String(DEV_CHAIN_ID), outcome: 'accepted', lane: 'express' }), 1);
  });

  it('a refusal proving the bytes were not sequenced falls back to the plain path with the same bytes', async () => {
    endpoint.fault = 'lost-control';
    const raw = await nextTx();
    const r = await submit(gate, raw);
    endpoint.fault = 'none';
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result, keccak256(raw));
    assert.equal(r.headers['x-txgate-lane'], 'plain');
    const lines = audits(gate, raw);
    assert.deepEqual(
      lines.map((a) => [a.lane, a.outcome, a.answer]),
      [
        ['express', 'not_sent', 'rejected'],
        ['plain', 'accepted', 'accepted'],
      ],
    );
    assert.equal(await landed(raw), true);
  });

  it('null, then nothing: the lookup decides (502 uncertain with the hash; never an acceptance)', async () => {
    await controlled(gate); // after the refusal's backoff
    endpoint.fault = 'null-then-nothing';
    const raw = await nextTx();
    const r = await submit(gate, raw);
    endpoint.fault = 'none';
    assert.equal(r.status, 502, r.text);
    assert.equal(r.json.error.data.reason, 'upstream_error');
    assert.equal(r.json.error.data.txHash, keccak256(raw));
    assert.equal(r.headers['x-txgate-lane'], 'express');
    assert.deepEqual(
      audits(gate, raw).map((a) => [a.lane, a.outcome, a.rule]),
      [['express', 'uncertain', undefined]],
    );
    assert.equal(await known(raw), false);
  });

  it('garbage from the endpoint is never a refusal: the lookup finds nothing, 502 uncertain', async () => {
    endpoint.fault = 'garbage';
    const raw = await nextTx();
    const since = gate.logs.length;
    const r = await submit(gate, raw);
    endpoint.fault = 'none';
    assert.equal(r.status, 502, r.text);
    assert.equal(r.json.error.data.txHash, keccak256(raw));
    assert.deepEqual(
      audits(gate, raw, since).map((a) => [a.lane, a.outcome, a.rule]),
      [['express', 'uncertain', undefined]],
    );
  });

  it('the WebSocket transport goes through the same rule', async () => {
    await controlled(gate);
    const raw = await nextTx();
    const since = gate.logs.length;
    const ws = new WebSocket(`ws://127.0.0.1:${gate.port}/`, { headers: { host: 'localhost', 'x-api-key': desk }, perMessageDeflate: false });
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok());
      ws.once('error', fail);
    });
    const answer = new Promise<{ result?: string }>((ok) => ws.once('message', (d: Buffer) => ok(JSON.parse(d.toString()))));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }));
    assert.equal((await answer).result, keccak256(raw));
    ws.close();
    assert.deepEqual(
      audits(gate, raw, since).map((a) => a.lane),
      ['express'],
    );
    assert.equal(await landed(raw), true);
  });

  it("the sync send's receipt mode sends through the lane and answers the receipt", async () => {
    await controlled(gate);
    const raw = await nextTx();
    const since = gate.logs.length;
    const r = await rpc(gate.port, 'eth_sendRawTransactionSync', [raw], { key: desk });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result.transactionHash, keccak256(raw));
    assert.equal(audits(gate, raw, since)[0]!.lane, 'express');
  });

  it("two edges share the controller with don't-care numbers: both wrap, both land", async () => {
    await controlled(gate);
    await controlled(twin);
    const before = endpoint.received.length;
    const a = await nextTx();
    const ra = await submit(gate, a);
    const b = await nextTx();
    const rb = await submit(twin, b);
    assert.equal(ra.headers['x-txgate-lane'], 'express', ra.text);
    assert.equal(rb.headers['x-txgate-lane'], 'express', rb.text);
    // These two, and only these, reached the endpoint since: both with "don't care".
    const seqs = endpoint.received.slice(before).map((s) => s.seq);
    assert.deepEqual(seqs, [(1n << 64n) - 1n, (1n << 64n) - 1n]);
    assert.equal(await landed(a), true);
    assert.equal(await landed(b), true);
  });
});

describe('the express lane when the chain RPC goes away', () => {
  it("a lane whose auction state is stale is named in /ready's warnings and not taken as ours", async () => {
    await controlled(gate);
    await anvil.stop();
    await eventually(() => gate.app.readiness.warnings().some((w) => /express lane 4663: auction state stale/.test(w)), 10_000);
    assert.equal(gate.app.lanes.lanes.status().get(DEV_CHAIN_ID)!.controlled, false);
    // Back for the tests after (a fresh chain: the lane is refused at start there, as the contract is gone).
    anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
    auction = await deployAuction(anvil.url, DEV_CHAIN_ID);
  });
});

describe('the express lane at start', () => {
  /** A config file for the CLI: chain 4663 on anvil with the lane, its key in a file only its owner reads. */
  const configFile = (workers: number, lane: Record<string, unknown>): string => {
    const dir = tempDir('txgate-el-');
    writeFileSync(join(dir, 'accounts.json'), JSON.stringify(accountsDoc([{ id: 'desk', keys: [newKey()], grants: [{ expressLane: true }] }])));
    writeFileSync(join(dir, 'controller.key'), OURS_KEY, { mode: 0o600 });
    const expressLane = { enabled: true, auction: auction.address.toLowerCase(), endpoint: endpoint.url, keyFile: 'controller.key', ...lane };
    const chains = [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [anvil.url], rpc: anvil.url, expressLane }];
    const file = join(dir, 'txgate.json');
    writeFileSync(
      file,
      JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, internal: { enabled: false }, workers, chains, accounts: { file: join(dir, 'accounts.json') } }),
    );
    return file;
  };
  /** The one line on stderr, without the controller key. */
  const refusal = (stderr: string): string => {
    const line = oneLine(stderr, { trace: null });
    assert.equal(stderr.includes(OURS_KEY.slice(2)), false, 'the controller key on stderr');
    return line;
  };

  for (const workers of [1, 2])
    it(`a contract that does not answer: one line naming the chain, exit 1 (workers: ${workers})`, async () => {
      const r = await runCli(configFile(workers, { auction: '0x000000000000000000000000000000000000dead' }));
      assert.equal(r.code, 1);
      assert.match(refusal(r.stderr), /^txgate: chains\[0\]\.expressLane: .*does not answer roundTimingInfo\(\)/);
      assert.doesNotMatch(r.stdout, /txgate listening/);
    });

  it('the ordered mode with more than one worker thread is a configuration problem (exit 2, as every one)', async () => {
    const r = await runCli(configFile(2, { sequence: 'ordered' }));
    assert.equal(r.code, 2);
    assert.match(r.stderr, /chains\[0\]\.expressLane\.sequence: "ordered" needs workers: 1/);
  });
});
