/**
 * End to end against a real chain: anvil started by the test, txgate in front of it, and a real
 * client (viem) that talks to txgate with X-Api-Key and to anvil as the chain RPC.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, createWalletClient, http } from 'viem';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { eventually, MIN_TIP, newKey, startGate, type Gate } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { SIGNERS, anvilChain, signNext } from '../support/txs.js';
import { freePort } from '../../src/base/free-port.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const key = newKey();
const listed = newKey(); // a grant that only SIGNERS[5] may sign for, with a burst of 1
let anvil: Anvil;
let gate: Gate;

let chainRpc: ReturnType<typeof createPublicClient>;
let viaGate: ReturnType<typeof createWalletClient>;
let anvilPort: number;

before(async () => {
  anvilPort = await freePort();
  anvil = await startAnvil({ port: anvilPort, chainId: DEV_CHAIN_ID });
  gate = await startGate({
    chainB: false,
    sequencers: [anvil.url],
    accounts: [
      { id: 'e2e', keys: [key], allowUntipped: true },
      { id: 'listed', keys: [listed], grants: [{ rateLimit: { perSecond: 0.001, burst: 1 }, senders: [SIGNERS[5]!.address] }] },
    ],
    // A short accepted window: the resend past it is tested without waiting out the default 5 s.
    config: { allowUntipped: true, dedup: { acceptedTtlMs: 1000 } },
  });
  chainRpc = createPublicClient({ chain: anvilChain(anvil.url), transport: http(anvil.url) });
  const base = `http://127.0.0.1:${gate.port}`;
  viaGate = createWalletClient({ chain: anvilChain(base), transport: http(base, { fetchOptions: { headers: { 'x-api-key': key } } }) });
});
after(async () => {
  await gate.stop();
  await anvil.stop();
});

describe('against a real anvil', () => {
  it('is ready once accounts are loaded and anvil answers the probe', async () => {
    assert.equal((await send({ port: gate.port, method: 'GET', path: '/ready' })).status, 200);
  });

  it('the client flow: eth_chainId, submit, receipt status 0x1', async () => {
    assert.equal(await viaGate.getChainId(), 4663);
    const raw = await signNext(anvil.url, 0);
    const hash = await viaGate.sendRawTransaction({ serializedTransaction: raw });
    const receipt = await chainRpc.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10_000 });
    assert.equal(receipt.status, 'success');
    assert.equal(receipt.transactionHash, hash);
  });

  it('a reverting call is accepted, and its receipt is 0x0', async () => {
    // Deploy (directly on the chain) a contract whose code is PUSH1 0 PUSH1 0 REVERT.
    const deployTx = await signNext(anvil.url, 1, { to: null, value: 0n, data: '0x6460006000fd6000526005601bf3', gas: 100_000n });
    const deployHash = await chainRpc.sendRawTransaction({ serializedTransaction: deployTx });
    const contract = (await chainRpc.waitForTransactionReceipt({ hash: deployHash, pollingInterval: 50 })).contractAddress!;
    // An untipped plain transfer (account and deployment allow it) to the reverting contract.
    const raw = await signNext(anvil.url, 2, { to: contract, value: 0n, gas: 60_000n });
    const r = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
    assert.equal(r.status, 200, r.text);
    const receipt = await chainRpc.waitForTransactionReceipt({ hash: r.json.result, pollingInterval: 50 });
    assert.equal(receipt.status, 'reverted');
  });

  it('the same bytes again: the same hash and a single forward', async () => {
    const raw = await signNext(anvil.url, 3);
    const a = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
    const b = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
    assert.equal(a.status, 200);
    assert.equal(b.json.result, a.json.result);
    const forwards = gate.logs.map((l) => JSON.parse(l)).filter((l) => l.audit === 'forward' && l.tx === a.json.result);
    assert.equal(forwards.length, 1);
  });

  it('the same bytes after the dedup window: anvil says "already imported"/known, still 200 with the hash', async () => {
    const raw = await signNext(anvil.url, 3);
    const a = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
    assert.equal(a.status, 200);
    await chainRpc.waitForTransactionReceipt({ hash: a.json.result, pollingInterval: 50 });
    await new Promise((r) => setTimeout(r, 1100)); // past the 1 s accepted window (dedup.acceptedTtlMs above)
    const b = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
    assert.equal(b.status, 200, b.text);
    assert.equal(b.json.result, a.json.result, 'a mined tx resubmitted is still reported with its hash');
  });

  it('a nonce already used: the upstream error passes through with HTTP 200', async () => {
    const used = (await chainRpc.getTransactionCount({ address: SIGNERS[0]!.address })) - 1;
    const raw = await signNext(anvil.url, 0, { nonce: used, value: MIN_TIP + 1n });
    const r = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
    assert.equal(r.status, 200);
    assert.equal(r.json.error.data.reason, 'upstream_rejected');
    assert.match(r.json.error.message, /nonce/i);
  });

  it("a grant's sender allow-list: another sender gets 403 and spends no token; the listed sender is accepted and mined", async () => {
    const other = await signNext(anvil.url, 6);
    const refused = await rpc(gate.port, 'eth_sendRawTransaction', [other], { key: listed });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.json.error.data.reason, 'sender_not_allowed');
    // The grant's burst is 1: had the refusal spent the token, this would be 429.
    const raw = await signNext(anvil.url, 5);
    const ok = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key: listed });
    assert.equal(ok.status, 200, ok.text);
    const receipt = await chainRpc.waitForTransactionReceipt({ hash: ok.json.result, pollingInterval: 50, timeout: 10_000 });
    assert.equal(receipt.status, 'success');
    assert.equal(receipt.from.toLowerCase(), SIGNERS[5]!.address.toLowerCase());
    const line = gate.logs.map((l) => JSON.parse(l)).find((l) => l.audit === 'forward' && l.tx === ok.json.result);
    assert.equal(line.sender, SIGNERS[5]!.address.toLowerCase(), 'the audit line carries the recovered sender');
    const unlisted = gate.logs.map((l) => JSON.parse(l)).filter((l) => l.audit === 'forward' && l.account === 'e2e');
    assert.ok(unlisted.length > 0 && unlisted.every((l) => l.sender === undefined), 'nothing recovered without a list');
    const spent = await rpc(gate.port, 'eth_sendRawTransaction', [await signNext(anvil.url, 5)], { key: listed });
    assert.equal(spent.status, 429, 'the one token went to the accepted submission');
    const tips = async (k: string) => (await send({ port: gate.port, method: 'GET', path: '/tip-addresses', headers: { 'x-api-key': k } })).json;
    assert.equal((await tips(listed)).senderAllowList, true);
    assert.equal((await tips(key)).senderAllowList, false);
    assert.ok(
      !JSON.stringify(await tips(listed))
        .toLowerCase()
        .includes(SIGNERS[5]!.address.slice(2).toLowerCase()),
      'the list itself is not shown',
    );
  });

  it('anvil stopped → 502/503 and /ready 503; anvil back → ready and accepting again', async () => {
    const raw = await signNext(anvil.url, 4);
    await anvil.stop();
    const r = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
    assert.ok([502, 503].includes(r.status), r.text);
    assert.ok(['upstream_error', 'upstream_unavailable'].includes(r.json.error.data.reason));
    await eventually(async () => (await send({ port: gate.port, method: 'GET', path: '/ready' })).status === 503, 3000);
    anvil = await startAnvil({ port: anvilPort, chainId: DEV_CHAIN_ID });
    await eventually(async () => (await send({ port: gate.port, method: 'GET', path: '/ready' })).status === 200, 5000);
    const again = await signNext(anvil.url, 4);
    const ok = await rpc(gate.port, 'eth_sendRawTransaction', [again], { key });
    assert.equal(ok.status, 200, ok.text);
    const receipt = await chainRpc.waitForTransactionReceipt({ hash: ok.json.result, pollingInterval: 50 });
    assert.equal(receipt.status, 'success');
  });
});
