/**
 * eth_sendRawTransactionSync (EIP-7966) against real anvil chains: one mining a block every
 * second (the receipt comes within the wait), one that never mines (it never does). Receipt mode:
 * sync-receipt.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, createWalletClient, http, keccak256, type Hex } from 'viem';
import { TxgateProvider } from '../../packages/client/src/ethers.js';
import { txgate, txgateReason as viemReason } from '../../packages/client/src/viem.js';
import { connectTxgate } from '../../packages/client/src/index.js';
import { eventually, MIN_TIP, startGate, TIP, type Gate } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { SIGNERS, anvilChain, signNext } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { SYNC, syncCall, useSyncChains } from '../support/sync-chains.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const chains = useSyncChains();
const { key, plain, tight } = chains.keys;
let gate: Gate;
let gateStuck: Gate;
let gateOff: Gate;
const audits = (g: Gate, hash: string) => g.logs.filter((l) => l.includes('"audit":"forward"') && l.includes(hash) && l.includes('eth_sendRawTransactionSync'));

describe('eth_sendRawTransactionSync', () => {
  before(async () => {
    const config = { allowUntipped: true };
    const { accounts, mining, stuck } = chains;
    gate = await startGate({ chainB: false, sequencers: [mining.url], accounts, config, chainA: { sync: SYNC } });
    gateStuck = await startGate({ chainB: false, sequencers: [stuck.url], accounts, config, chainA: { sync: { ...SYNC, maxWaitMs: 500 } } });
    gateOff = await startGate({ chainB: false, sequencers: [mining.url], accounts, config, internal: true });
  });
  after(async () => {
    await Promise.all([gate.stop(), gateStuck.stop(), gateOff.stop()]);
  });

  it('off (the default): refused as any method not served, 400 method_not_found', async () => {
    const r = await syncCall(gateOff, key, [await signNext(chains.mining.url, 1)]);
    assert.equal(r.status, 400);
    assert.equal(r.json.error.data.reason, 'method_not_found');
    const metrics = (await send({ port: gateOff.internalPort!, method: 'GET', path: '/metrics' })).text;
    assert.match(metrics, /txgate_requests_total\{method="other",status="400",reason="method_not_found",transport="http"\} 1/);
    assert.doesNotMatch(metrics, /eth_sendRawTransactionSync|txgate_sync_/, 'no sync series where no chain serves it');
  });

  it('a grant without sync: 403 sync_not_granted, nothing sent', async () => {
    const raw = await signNext(chains.mining.url, 1);
    const r = await syncCall(gate, plain, [raw]);
    assert.equal(r.status, 403);
    assert.equal(r.json.error.data.reason, 'sync_not_granted');
  });

  it('bad params: 400 invalid_params (a timeout that is not a positive integer or 0x-hex)', async () => {
    const raw = await signNext(chains.mining.url, 1);
    for (const params of [[raw, 'soon'], [raw, -5], [raw, 1, 2], []]) {
      const r = await syncCall(gate, key, params);
      assert.equal(r.status, 400, JSON.stringify(params));
      assert.equal(r.json.error.data.reason, 'invalid_params');
    }
  });

  it('executed: 200 with the receipt as the chain gave it, in one call; a concurrent resend joins it, a later one is answered from it', async () => {
    const raw = await signNext(chains.mining.url, 2);
    const [a, b] = await Promise.all([syncCall(gate, key, [raw, '0xbb8']), syncCall(gate, key, [raw, 3000])]);
    for (const r of [a, b]) {
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.result.status, '0x1');
      assert.match(r.json.result.blockNumber, /^0x[0-9a-f]+$/);
    }
    const hash = a.json.result.transactionHash as string;
    assert.equal(b.json.result.transactionHash, hash);
    const receipt = await createPublicClient({ transport: http(chains.mining.url) }).getTransactionReceipt({ hash: hash as Hex });
    assert.equal(receipt.status, 'success');
    assert.equal(audits(gate, hash).length, 1, 'one forward for both');
    const again = await syncCall(gate, key, [raw]);
    assert.equal(again.status, 200);
    assert.equal(again.json.result.transactionHash, hash);
    assert.equal(audits(gate, hash).length, 1, 'answered from the receipt, not forwarded again');
    assert.ok(audits(gate, hash)[0]!.includes('status 0x1 block'), 'the audit line carries the receipt status and block');
  });

  it('a resend of executed bytes whose receipt this edge no longer holds answers the same receipt, every time (never a refusal, never 202 while the chain has it)', async () => {
    // receiptTtlMs 0: every resend is forwarded again, as on another thread or edge; the
    // sequencer says "nonce too low" or "already known" for bytes it executed.
    const forget = { sync: { ...SYNC, receiptTtlMs: 0 } };
    for (const g of [await chains.gateOn(chains.mining, forget), await chains.gateOn(chains.mining, { ...forget, rpc: chains.mining.url })]) {
      try {
        for (let tx = 0; tx < 3; tx++) {
          const raw = await signNext(chains.mining.url, 5);
          const first = await syncCall(g, key, [raw]);
          assert.equal(first.status, 200, JSON.stringify(first.json));
          for (let i = 0; i < 4; i++) {
            const again = await syncCall(g, key, [raw]);
            assert.equal(again.status, 200, `resend ${i} of tx ${tx}: ${JSON.stringify(again.json)}`);
            assert.equal(again.json.result.transactionHash, first.json.result.transactionHash);
            assert.equal(again.json.result.blockHash, first.json.result.blockHash);
            assert.equal(again.json.result.status, '0x1');
          }
          assert.ok(g.logs.some((l) => l.includes('settled by the chain') && l.includes(first.json.result.transactionHash)));
        }
      } finally {
        await g.stop();
      }
    }
  });

  it('accepted without a receipt in the wait: 202, code 4, data.txHash (never "not sent"); the transaction is in the pool', async () => {
    const raw = await signNext(chains.stuck.url, 3);
    const r = await syncCall(gateStuck, key, [raw, 60_000]); // capped by maxWaitMs (500)
    assert.equal(r.status, 202, JSON.stringify(r.json));
    assert.equal(r.json.error.code, 4);
    assert.equal(r.json.error.data.reason, 'sync_timeout');
    const hash = r.json.error.data.txHash as Hex;
    const tx = await createPublicClient({ transport: http(chains.stuck.url) }).getTransaction({ hash });
    assert.equal(tx.hash, hash);
  });

  it('drain: a call waiting at a sequencer that knows its hash is answered at once, code 4 with the hash (not cut off at the grace period)', async () => {
    // A wait far past the grace period (2 s): without the drain's answer the call would be cut off.
    const g = await chains.gateOn(chains.stuck, { sync: { ...SYNC, maxWaitMs: 60_000 } });
    const raw = await signNext(chains.stuck.url, 0);
    const hash = keccak256(raw);
    const call = syncCall(g, key, [raw]);
    const chainRpc = createPublicClient({ transport: http(chains.stuck.url) });
    await eventually(async () => (await chainRpc.getTransaction({ hash }).catch(() => null)) !== null);
    await g.stop();
    const res = await call;
    assert.equal(res.status, 202, JSON.stringify(res.json));
    assert.deepEqual([res.json.error.code, res.json.error.data.reason, res.json.error.data.txHash], [4, 'sync_timeout', hash]);
    assert.ok(g.logs.some((l) => l.includes('"audit":"forward"') && l.includes(hash) && l.includes('draining; the sequencer knows the hash')));
  });

  it('a resend joining a waiting call spends no rate-limit token (bytes in flight cost none, as for the plain send)', async () => {
    const g = await chains.gateOn(chains.stuck, { sync: { ...SYNC, maxWaitMs: 1500 } });
    try {
      const raw = await signNext(chains.stuck.url, 3);
      const first = syncCall(g, tight, [raw]);
      const chainRpc = createPublicClient({ transport: http(chains.stuck.url) });
      await eventually(async () => (await chainRpc.getTransaction({ hash: keccak256(raw) }).catch(() => null)) !== null);
      const joined = await syncCall(g, tight, [raw]);
      assert.notEqual(joined.status, 429, JSON.stringify(joined.json));
      assert.equal((await first).status, 202);
      // The bucket is empty all the same: other bytes are refused.
      const other = await syncCall(g, tight, [await signNext(chains.stuck.url, 4)]);
      assert.equal(other.status, 429, JSON.stringify(other.json));
    } finally {
      await g.stop();
    }
  });

  it('the wait asked for is the wait given, where the sequencer cannot be told it (omit): ended by txgate, code 4 for a hash the sequencer knows', async () => {
    // The forward timeout is far past the asked wait: only txgate's own end of the wait answers in time.
    const g = await chains.gateOn(chains.stuck, { sync: { ...SYNC, maxWaitMs: 60_000 }, forward: { timeoutMs: 60_000 } });
    try {
      const raw = await signNext(chains.stuck.url, 5);
      const r = await syncCall(g, key, [raw, 1000]);
      assert.equal(r.status, 202, JSON.stringify(r.json));
      assert.deepEqual([r.json.error.code, r.json.error.data.txHash], [4, keccak256(raw)]);
      // Cut at its part of the wait (sync/budget.ts), then settled by the lookup: the hash is known.
      assert.ok(
        g.logs.some((l) => l.includes('"audit":"forward"') && l.includes('the hash is known')),
        g.logs.filter((l) => l.includes('"audit"')).join('\n'),
      );
    } finally {
      await g.stop();
    }
  });

  it('executed and reverted: 200 with the receipt, status 0x0 (it executed; the chain says how)', async () => {
    const reverter = '0x00000000000000000000000000000000000f00d5';
    // PUSH1 0 PUSH1 0 REVERT
    assert.equal((await rpc(Number(new URL(chains.mining.url).port), 'anvil_setCode', [reverter, '0x60006000fd'])).status, 200);
    const raw = await signNext(chains.mining.url, 0, { to: reverter, value: 0n, gas: 50_000n });
    const r = await syncCall(gate, key, [raw]);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual([r.json.result.transactionHash, r.json.result.status], [keccak256(raw), '0x0']);
    assert.ok(audits(gate, keccak256(raw))[0]!.includes('status 0x0 block'), 'the audit line carries the status');
  });

  it('beyond maxWaiting: 503 overloaded before anything is sent; the waiting call is answered as ever', async () => {
    const g = await chains.gateOn(chains.stuck, { sync: { ...SYNC, maxWaiting: 1, maxWaitMs: 1500 } });
    try {
      const chainRpc = createPublicClient({ transport: http(chains.stuck.url) });
      const first = await signNext(chains.stuck.url, 1);
      const waiting = syncCall(g, key, [first]);
      await eventually(async () => (await chainRpc.getTransaction({ hash: keccak256(first) }).catch(() => null)) !== null);
      const second = await signNext(chains.stuck.url, 2);
      const r = await syncCall(g, key, [second]);
      assert.equal(r.status, 503, JSON.stringify(r.json));
      assert.equal(r.json.error.data.reason, 'overloaded');
      assert.equal(await chainRpc.getTransaction({ hash: keccak256(second) }).catch(() => null), null, 'not sent');
      const w = await waiting;
      assert.deepEqual([w.status, w.json.error.code, w.json.error.data.txHash], [202, 4, keccak256(first)]);
    } finally {
      await g.stop();
    }
  });

  it('refused by the sequencer (nonce too low, other bytes): passed through as for the plain send', async () => {
    const first = await signNext(chains.mining.url, 4);
    assert.equal((await syncCall(gate, key, [first])).status, 200);
    const clash = await signNext(chains.mining.url, 4, { nonce: 0, value: MIN_TIP + 1n }); // other bytes for the nonce taken
    const r = await syncCall(gate, key, [clash]);
    assert.equal(r.status, 200);
    assert.equal(r.json.error.data.reason, 'upstream_rejected');
  });

  it('the client kit: submitSync returns the receipt as the outcome, or pending with the hash', async () => {
    const kit = await connectTxgate({ url: `http://127.0.0.1:${gate.port}`, apiKey: key, chainId: DEV_CHAIN_ID, chainRpcUrl: chains.mining.url });
    const out = await kit.submitSync(await signNext(chains.mining.url, 5), { maxWaitMs: 3000 });
    assert.equal(out.kind, 'executed');
    assert.equal(out.kind === 'executed' && out.receipt.status, '0x1');
    await kit.close();
    const kitStuck = await connectTxgate({ url: `http://127.0.0.1:${gateStuck.port}`, apiKey: key, chainId: DEV_CHAIN_ID, chainRpcUrl: chains.stuck.url });
    const raw = await signNext(chains.stuck.url, 6);
    const p = await kitStuck.submitSync(raw);
    assert.equal(p.kind, 'pending');
    assert.equal(p.kind === 'pending' && p.hash, await kitStuck.hashOf(raw));
    await kitStuck.close();
  });
  it('viem: sendRawTransactionSync and sendTransactionSync through the txgate transport return the executed receipt in one call', async () => {
    const chain = anvilChain(chains.mining.url);
    const transport = txgate({ url: `http://127.0.0.1:${gate.port}`, apiKey: key, rpc: chains.mining.url });
    const wallet = createWalletClient({ account: SIGNERS[0]!, chain, transport });
    const raw = await signNext(chains.mining.url, 1);
    const receipt = await wallet.sendRawTransactionSync({ serializedTransaction: raw });
    assert.equal(receipt.status, 'success');
    assert.equal(receipt.transactionHash, keccak256(raw));
    const sent = await wallet.sendTransactionSync({ to: TIP as Hex, value: MIN_TIP });
    assert.equal(sent.status, 'success');
    assert.ok(audits(gate, sent.transactionHash).length >= 1, 'it went through txgate, not to the chain RPC');
    // A grant without sync: viem throws with txgate's reason.
    const plainWallet = createWalletClient({
      account: SIGNERS[0]!,
      chain,
      transport: txgate({ url: `http://127.0.0.1:${gate.port}`, apiKey: plain, rpc: chains.mining.url }),
    });
    const err = await plainWallet.sendRawTransactionSync({ serializedTransaction: await signNext(chains.mining.url, 2) }).catch((e: unknown) => e);
    assert.equal(viemReason(err), 'sync_not_granted');
  });

  it('ethers: TxgateProvider.submitSync gives the kit outcome, and send("eth_sendRawTransactionSync") the receipt', async () => {
    const provider = new TxgateProvider({ url: `http://127.0.0.1:${gate.port}`, apiKey: key, rpc: chains.mining.url, chainId: DEV_CHAIN_ID });
    try {
      const out = await provider.submitSync(await signNext(chains.mining.url, 3), { maxWaitMs: 3000 });
      assert.equal(out.kind, 'executed', JSON.stringify(out));
      const receipt = (await provider.send('eth_sendRawTransactionSync', [await signNext(chains.mining.url, 4)])) as {
        status: string;
        transactionHash: string;
      };
      assert.equal(receipt.status, '0x1');
      assert.ok(audits(gate, receipt.transactionHash).length >= 1);
    } finally {
      provider.destroy();
    }
  });
});

/**
 * `receipt` mode: the sequencer takes only the plain send (anvil stands in for one: it is sent
 * eth_sendRawTransaction alone), and the receipt is read from the chain RPC (`chains[].rpc`,
 * the same anvil).
 */
