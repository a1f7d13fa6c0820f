/**
 * Following accepted transactions to their block (`chains[].track`) against real anvil chains:
 * one mining a block every second (inclusion, a revert, a replacement, reorgs), one mining only
 * when told (a drop); two accounts (neither sees the other's), and a second edge asked about a
 * transaction the first accepted (answered from the chain).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { keccak256, type Hex } from 'viem';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import type { Entry } from '../../src/track/table.js';
import { eventually, newKey, startGate, type Gate } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { rpc, send } from '../support/http.js';
import { pendingNonce, signNext } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const key = newKey();
const other = newKey();
const accounts = [
  { id: 'desk', keys: [key], allowUntipped: true },
  { id: 'other', keys: [other], allowUntipped: true },
];
const TRACK = { enabled: true, dropAfterBlocks: 2, dropAfterMs: 0, pollMs: 100 };
let mining: Anvil;
let manual: Anvil;
let gate: Gate;
let second: Gate;
let gateManual: Gate;
let gateOff: Gate;
/** Every change the trackers told, by hash: the states in order. */
const told = new Map<string, string[]>();
const pushed = new Map<string, string[]>();

const tracked = (a: Anvil, extra: Record<string, unknown> = {}) =>
  startGate({ chainB: false, sequencers: [a.url], accounts, config: { allowUntipped: true }, chainA: { rpc: a.url, track: TRACK, ...extra } });

before(async () => {
  mining = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID, blockTime: 1 });
  manual = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID, extraArgs: ['--no-mining'] });
  gate = await tracked(mining);
  second = await tracked(mining);
  gateManual = await tracked(manual);
  gateOff = await startGate({ chainB: false, sequencers: [mining.url], accounts, config: { allowUntipped: true } });
  for (const g of [gate, gateManual])
    g.app.trackers.get(DEV_CHAIN_ID)!.listen((e: Entry, status: string) => {
      told.set(e.hash, [...(told.get(e.hash) ?? []), e.state]);
      pushed.set(e.hash, [...(pushed.get(e.hash) ?? []), status]);
    });
});
after(async () => {
  await Promise.all([gate.stop(), second.stop(), gateManual.stop(), gateOff.stop()]);
  await Promise.all([mining.stop(), manual.stop()]);
});

const chainCall = async (a: Anvil, method: string, params: unknown[]) => (await rpc(Number(new URL(a.url).port), method, params)).json;

async function submit(g: Gate, raw: Hex, k = key): Promise<string> {
  const r = await rpc(g.port, 'eth_sendRawTransaction', [raw], { key: k });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.result as string;
}

const status = async (g: Gate, hash: string, k = key) => {
  const r = await rpc(g.port, 'txgate_getTransactionStatus', [hash], { key: k });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.result as Record<string, any>;
};
const until = (g: Gate, hash: string, want: string, ms = 15_000): Promise<Record<string, any>> =>
  eventually(async () => {
    const s = await status(g, hash);
    return s.status === want ? s : null;
  }, ms) as Promise<Record<string, any>>;

describe('tracking accepted transactions', () => {
  it('the status queries have series of their own where a chain tracks', async () => {
    const g = await startGate({
      chainB: false,
      sequencers: [mining.url],
      accounts,
      internal: true,
      config: { allowUntipped: true },
      chainA: { rpc: mining.url, track: TRACK },
    });
    try {
      await status(g, '0x' + 'cd'.repeat(32));
      const metrics = (await send({ port: g.internalPort!, method: 'GET', path: '/metrics' })).text;
      assert.match(metrics, /txgate_requests_total\{method="txgate_getTransactionStatus",status="200",reason="ok",transport="http"\} 1/);
      assert.match(metrics, /txgate_requests_total\{method="txgate_getTransactionStatus",status="503",reason="chain_unavailable",transport="http"\} 0/);
      assert.match(metrics, /txgate_tracked_final_total\{chain="4663",state="dropped"\} 0/);
    } finally {
      await g.stop();
    }
  });

  it('off (the default): txgate_getTransactionStatus is a method not served', async () => {
    const r = await rpc(gateOff.port, 'txgate_getTransactionStatus', ['0x' + '11'.repeat(32)], { key });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.data.reason, 'method_not_found');
  });

  it('bad params: 400 invalid_params; no key: 401, as a submission', async () => {
    for (const params of [[], ['0x12'], ['0x' + '11'.repeat(32), 1], [42]]) {
      const r = await rpc(gate.port, 'txgate_getTransactionStatus', params, { key });
      assert.equal(r.json.error.data.reason, 'invalid_params', JSON.stringify(params));
    }
    const r = await rpc(gate.port, 'txgate_getTransactionStatus', ['0x' + '11'.repeat(32)], { key: 'nope' });
    assert.equal(r.status, 401);
  });

  it('included: the block, its index, gas used, the latency from acceptance, the sequencer and rule', async () => {
    const raw = await signNext(mining.url, 1);
    const hash = await submit(gate, raw);
    const pending = await status(gate, hash);
    assert.equal(pending.source, 'edge');
    assert.ok(pending.status === 'pending' || pending.status === 'included');
    const s = await until(gate, hash, 'included');
    const receipt = (await chainCall(mining, 'eth_getTransactionReceipt', [hash])).result;
    assert.deepEqual(
      [s.block.number, s.block.hash, s.block.index, s.gasUsed, s.final, s.rule, s.sequencer, s.chainId],
      [Number(receipt.blockNumber), receipt.blockHash, Number(receipt.transactionIndex), 21000, true, 'hash', mining.url, 4663],
    );
    assert.ok(s.inclusionMs >= 0 && s.acceptedAt >= s.receivedAt && s.block.seenAt >= s.acceptedAt && s.block.timestamp > 0);
    assert.deepEqual(told.get(hash), ['pending', 'included']);
    const audit = gate.logs.find((l) => l.includes('"audit":"track"') && l.includes(hash));
    assert.ok(audit !== undefined, 'the final state has its audit line');
    assert.deepEqual(((a) => [a.state, a.account, a.block, a.inclusionMs, a.rule])(JSON.parse(audit)), [
      'included',
      'desk',
      s.block.number,
      s.inclusionMs,
      'hash',
    ]);
  });

  it('another account asking: answered exactly as an unknown hash is (from the chain); another edge: from the chain', async () => {
    const raw = await signNext(mining.url, 2);
    const hash = await submit(gate, raw);
    await until(gate, hash, 'included');
    const theirs = await status(gate, hash, other);
    const elsewhere = await status(second, hash);
    assert.deepEqual(theirs, elsewhere, 'the other account learns nothing the chain does not tell anyone');
    assert.equal(theirs.source, 'chain');
    assert.equal(theirs.status, 'included');
    assert.equal(theirs.sequencer, undefined);
    const unknown = await status(gate, '0x' + 'ab'.repeat(32), other);
    assert.deepEqual([unknown.status, unknown.source, unknown.block], ['unknown', 'chain', null]);
  });

  it('reverted: in a block, receipt status 0', async () => {
    const reverter = '0x00000000000000000000000000000000000f00d6';
    await chainCall(mining, 'anvil_setCode', [reverter, '0x60006000fd']); // PUSH1 0 PUSH1 0 REVERT
    const hash = await submit(gate, await signNext(mining.url, 3, { to: reverter, gas: 50_000n, value: 0n }));
    const s = await until(gate, hash, 'reverted');
    assert.equal(s.final, true);
    assert.ok(s.gasUsed > 21000);
  });

  it('replaced: another transaction of the same sender and nonce was included', async () => {
    const n = await pendingNonce(mining.url, 4);
    // The first waits behind a gap; the replacement (a higher fee, same nonce) takes its place, then the gap is filled.
    const first = await submit(gate, await signNext(mining.url, 4, { nonce: n + 1 }));
    const replacement = await submit(gate, await signNext(mining.url, 4, { nonce: n + 1, maxFeePerGas: 3n * 10n ** 10n }));
    await submit(gate, await signNext(mining.url, 4, { nonce: n }));
    const s = await until(gate, first, 'replaced');
    assert.equal(s.replacedBy, replacement);
    assert.equal(s.final, true);
    assert.equal((await until(gate, replacement, 'included')).status, 'included');
    assert.ok(s.replacedIn.number > 0);
  });

  it('dropped: the chain no longer knows it and its nonce is unused', async () => {
    const hash = await submit(gateManual, await signNext(manual.url, 5));
    assert.equal((await status(gateManual, hash)).status, 'pending');
    assert.equal((await chainCall(manual, 'anvil_dropTransaction', [hash])).error, undefined);
    await chainCall(manual, 'anvil_mine', ['0x3']);
    const s = await until(gateManual, hash, 'dropped');
    assert.deepEqual([s.final, s.block, s.replacedBy], [true, null, null]);
    assert.deepEqual(told.get(hash), ['pending', 'dropped']);
  });

  it('the sync send is tracked too: its receipt is an acceptance', async () => {
    const g = await startGate({
      chainB: false,
      sequencers: [mining.url],
      accounts: [{ id: 'desk', keys: [key], allowUntipped: true, grants: [{ sync: true }] }],
      config: { allowUntipped: true },
      chainA: { rpc: mining.url, track: TRACK, sync: { enabled: true, maxWaitMs: 3000, syncTimeoutFormat: 'omit' } },
    });
    try {
      const r = await rpc(g.port, 'eth_sendRawTransactionSync', [await signNext(mining.url, 5)], { key });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      const hash = r.json.result.transactionHash as string;
      const s = await until(g, hash, 'included');
      assert.deepEqual([s.source, s.block.number], ['edge', Number(r.json.result.blockNumber)]);
    } finally {
      await g.stop();
    }
  });

  it('a reorg: included, back to pending when its block leaves the canonical chain, then included again where it lands', async () => {
    const raw = await signNext(mining.url, 6);
    const hash = await submit(gate, raw);
    const s = await until(gate, hash, 'included');
    // The blocks from its own on replaced, the transaction in the first new one.
    const head = Number((await chainCall(mining, 'eth_blockNumber', [])).result);
    assert.equal((await chainCall(mining, 'anvil_reorg', [head - s.block.number + 1, [[raw, 0]]])).error, undefined);
    await eventually(() => (told.get(hash) ?? []).length >= 4, 20_000);
    assert.deepEqual(told.get(hash), ['pending', 'included', 'pending', 'included']);
    const again = await status(gate, hash);
    const receipt = (await chainCall(mining, 'eth_getTransactionReceipt', [hash])).result;
    assert.deepEqual([again.status, again.reorgs, again.block.hash], ['included', 1, receipt.blockHash]);
    assert.notEqual(again.block.hash, s.block.hash);
  });

  it('a rollback: included, back to pending, then dropped (anvil forgets the transaction)', async () => {
    const hash = await submit(gate, await signNext(mining.url, 0));
    const s = await until(gate, hash, 'included');
    const head = Number((await chainCall(mining, 'eth_blockNumber', [])).result);
    assert.equal((await chainCall(mining, 'anvil_rollback', [head - s.block.number + 1])).error, undefined);
    const final = await until(gate, hash, 'dropped', 20_000);
    assert.equal(final.reorgs, 1);
    assert.deepEqual(told.get(hash), ['pending', 'included', 'pending', 'dropped']);
  });

  it('every change told equals what a status call answered for that version', async () => {
    for (const [hash, statuses] of pushed) {
      const versions = statuses.map((t) => JSON.parse(t).version as number);
      assert.deepEqual(
        versions,
        versions.map((_, i) => i + 1),
        `${hash}: one change per version, in order`,
      );
      const now = await (gate.app.trackers.get(DEV_CHAIN_ID)!.own('desk', hash) !== null ? status(gate, hash) : status(gateManual, hash));
      assert.deepEqual(now, JSON.parse(statuses.at(-1)!));
    }
    assert.ok(pushed.size >= 6);
    void keccak256;
  });
});
