/**
 * The client kit (txgate-client) against a real anvil and a real txgate: refusals as definite
 * outcomes with their reason, waiting out rate limits, and faults injected by a proxy between
 * txgate and anvil (an answer lost after anvil took the transaction; a submission dropped before
 * anvil saw it): never a second transaction, never "failed" for one that landed. The viem
 * transport and the ethers provider: client-adapters.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer as createHttpServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connectTxgate, TxgateError, type Txgate } from '../../packages/client/src/index.js';
import { NO_ANSWER, Submitter, type ChainResult } from '../../packages/client/src/submitter.js';
import { openLink } from '../../packages/client/src/link.js';
import { TIP } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { pendingNonce, SIGNERS, signNext } from '../support/txs.js';
import { useClientChain } from '../support/client-chain.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const chain = useClientChain();
const { key, strictKey, slowKey, crowdKey } = chain.keys;
let kit: Txgate;

describe('txgate-client', () => {
  before(async () => {
    kit = await connectTxgate({ url: chain.base, apiKey: key, chainId: DEV_CHAIN_ID, chainRpcUrl: chain.anvil.url });
  });
  after(() => kit.close());
  it('connectTxgate stops on a chain id mismatch', async () => {
    await assert.rejects(
      connectTxgate({ url: chain.base, apiKey: key, chainId: 1, chainRpcUrl: chain.anvil.url }),
      (e: unknown) => e instanceof TxgateError && e.reason === 'chain_mismatch',
    );
  });
  it('submitAndWait: a reverting call is accepted, and its receipt is 0x0', async () => {
    const c = chain.chainRpc();
    const deployTx = await signNext(chain.anvil.url, 1, { to: null, value: 0n, data: '0x6460006000fd6000526005601bf3', gas: 100_000n });
    const contract = (await c.waitForTransactionReceipt({ hash: await c.sendRawTransaction({ serializedTransaction: deployTx }), pollingInterval: 50 }))
      .contractAddress!;
    const out = await kit.submitAndWait(await signNext(chain.anvil.url, 2, { to: contract, value: 0n, gas: 60_000n }), { timeoutMs: 10_000 });
    assert.equal(out.kind, 'mined');
    assert.ok(out.kind === 'mined' && out.status === 'reverted' && out.receipt.status === '0x0');
  });
  it('refusals are definite outcomes with their reason: 401, 402, 400 rejected; 429 rate_limited', async () => {
    const wrong = await connectTxgate({ url: chain.base, apiKey: 'txg_not_a_key', chainId: DEV_CHAIN_ID, chainRpcUrl: chain.anvil.url });
    const strict = await connectTxgate({ url: chain.base, apiKey: strictKey, chainId: DEV_CHAIN_ID, chainRpcUrl: chain.anvil.url });
    const slow = await connectTxgate({ url: chain.base, apiKey: slowKey, chainId: DEV_CHAIN_ID, chainRpcUrl: chain.anvil.url });
    try {
      const r401 = await wrong.submit(await signNext(chain.anvil.url, 0));
      assert.deepEqual([r401.kind, r401.kind === 'rejected' && r401.reason, r401.kind === 'rejected' && r401.status], ['rejected', 'unauthorized', 401]);
      const r402 = await strict.submit(await signNext(chain.anvil.url, 0, { to: '0x3333333333333333333333333333333333333333', value: 1n }));
      assert.deepEqual([r402.kind, r402.kind === 'rejected' && r402.reason, r402.kind === 'rejected' && r402.status], ['rejected', 'fee_rejected', 402]);
      const r400 = await kit.submit(await signNext(chain.anvil.url, 0, { chainId: 1 }));
      assert.deepEqual([r400.kind, r400.kind === 'rejected' && r400.reason, r400.kind === 'rejected' && r400.status], ['rejected', 'chain_mismatch', 400]);
      const first = await slow.submit(await signNext(chain.anvil.url, 3));
      assert.equal(first.kind, 'accepted');
      const r429 = await slow.submit(await signNext(chain.anvil.url, 4));
      assert.equal(r429.kind, 'rate_limited');
      assert.ok(r429.kind === 'rate_limited' && r429.retryAfterMs > 0);
    } finally {
      await Promise.all([wrong.close(), strict.close(), slow.close()]);
    }
  });
  it('X-RateLimit-Limit and -Remaining on every authenticated submission answer, not only 429', async () => {
    const ok = await rpc(chain.gate.port, 'eth_sendRawTransaction', [await signNext(chain.anvil.url, 0)], { key });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['x-ratelimit-limit'], '1000');
    assert.match(String(ok.headers['x-ratelimit-remaining']), /^\d+$/);
    const refused = await rpc(
      chain.gate.port,
      'eth_sendRawTransaction',
      [await signNext(chain.anvil.url, 0, { to: '0x3333333333333333333333333333333333333333', value: 1n })],
      {
        key: strictKey,
      },
    );
    assert.equal(refused.status, 402);
    assert.equal(refused.headers['x-ratelimit-limit'], '1000');
    const unauthenticated = await rpc(chain.gate.port, 'eth_sendRawTransaction', [await signNext(chain.anvil.url, 0)], { key: 'txg_nope' });
    assert.equal(unauthenticated.headers['x-ratelimit-limit'], undefined, 'no grant, no allowance to show');
  });
  it('tipAddresses reads GET /tip-addresses and revalidates it with its ETag (304)', async () => {
    const a = await kit.tipAddresses();
    assert.deepEqual(a.tipAddresses, [TIP]);
    const before = chain.gate.logs.length;
    const b = await kit.tipAddresses();
    assert.deepEqual(b, a);
    assert.ok(chain.gate.logs.slice(before).some((l) => JSON.parse(l).status === 304));
  });
  it('submitAndWait waits out rate limiting until timeoutMs: six at once against a bucket of 1 at 2/s, all mined', async () => {
    const crowd = await connectTxgate({ url: chain.base, apiKey: crowdKey, chainId: DEV_CHAIN_ID, chainRpcUrl: chain.anvil.url });
    try {
      const signer = SIGNERS[6]!;
      const c = chain.chainRpc();
      const nonce = await pendingNonce(chain.anvil.url, 6);
      const raws = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => signNext(chain.anvil.url, 6, { nonce: nonce + i })));
      const before = chain.gate.logs.length;
      const outs = await Promise.all(raws.map((r) => crowd.submitAndWait(r, { timeoutMs: 20_000 })));
      assert.deepEqual(
        outs.map((o) => o.kind),
        ['mined', 'mined', 'mined', 'mined', 'mined', 'mined'],
        JSON.stringify(outs.filter((o) => o.kind !== 'mined')),
      );
      const refused = chain.gate.logs.slice(before).filter((l) => JSON.parse(l).reason === 'rate_limited').length;
      assert.ok(refused >= 5, `the bucket did refuse (${refused} times); the kit waited and resent`);
      assert.equal(await c.getTransactionCount({ address: signer.address }), nonce + 6, 'no nonce gap: every one executed');
    } finally {
      await crowd.close();
    }
  });
  it('submitAndWait resends through not_forwarded until the sequencer is back, and says gave_up only when timeoutMs is spent', async () => {
    // A stand-in for txgate that answers 503 not_forwarded while `down`, and otherwise passes
    // the request to the real txgate.
    let down = true;
    let refusedWhileDown = 0;
    const stand = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (down && JSON.parse(body.toString()).method === 'eth_sendRawTransaction') {
          refusedWhileDown++;
          res.writeHead(503, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32002, message: 'no healthy sequencer', data: { reason: 'upstream_unavailable' } } }),
          );
          return;
        }
        const up = request(
          chain.base,
          { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': String(req.headers['x-api-key'] ?? '') } },
          (r) => {
            res.writeHead(r.statusCode ?? 502, { 'content-type': 'application/json' });
            r.pipe(res);
          },
        );
        up.end(body);
      });
    });
    await new Promise<void>((r) => stand.listen(0, '127.0.0.1', () => r()));
    const standUrl = `http://127.0.0.1:${(stand.address() as AddressInfo).port}`;
    const k = await connectTxgate({ url: standUrl, apiKey: key, chainId: DEV_CHAIN_ID, chainRpcUrl: chain.anvil.url });
    try {
      // Down for the whole wait: gave_up (nothing was sent, nothing can land), not before timeoutMs.
      const raw = await signNext(chain.anvil.url, 2);
      const t0 = performance.now();
      const gaveUp = await k.submitAndWait(raw, { timeoutMs: 2_500 });
      assert.equal(gaveUp.kind, 'gave_up', JSON.stringify(gaveUp));
      assert.equal(gaveUp.kind === 'gave_up' && gaveUp.last.kind, 'not_forwarded');
      assert.ok(performance.now() - t0 >= 2_450, 'it resent until the time given was spent');
      assert.ok(refusedWhileDown > 5, `more than the old 5 resends (${refusedWhileDown} attempts)`);
      // Back after ~1.5 s of a 20-s wait: the same bytes go through and are mined.
      setTimeout(() => {
        down = false;
      }, 1_500).unref();
      const out = await k.submitAndWait(raw, { timeoutMs: 20_000 });
      assert.equal(out.kind, 'mined', JSON.stringify(out));
    } finally {
      await k.close();
      stand.close();
    }
  });
  it('the answer is lost after anvil took the transaction: txgate looks the hash up on the same sequencer and answers accepted; nothing resent', async () => {
    const raw = await signNext(chain.anvil.url, 4);
    chain.proxy.next = 'lose-answer';
    const before = chain.proxy.forwarded.length;
    const out = await kit.submitAndWait(raw, { timeoutMs: 20_000 });
    assert.equal(out.kind, 'mined', JSON.stringify(out));
    assert.equal(out.kind === 'mined' && out.status, 'success');
    assert.equal(chain.proxy.forwarded.length - before, 1, 'anvil saw the bytes once: nothing more was sent');
    const audit = chain.gate.logs.map((l) => JSON.parse(l)).filter((l) => l.audit === 'forward' && l.tx === out.hash);
    assert.ok(
      audit.some((l) => l.rule === 'lookup' && /resent 0x/.test(l.detail)),
      `txgate resolved the lost answer by the lookup: ${JSON.stringify(audit)}`,
    );
  });
  it('a submission dropped before anvil saw it: resent once with the same bytes; exactly one transaction on chain', async () => {
    const signer = SIGNERS[5]!;
    const nonceBefore = await chain.chainRpc().getTransactionCount({ address: signer.address });
    const raw = await signNext(chain.anvil.url, 5);
    chain.proxy.next = 'drop';
    const before = chain.proxy.forwarded.length;
    const out = await kit.submitAndWait(raw, { timeoutMs: 20_000 });
    assert.equal(out.kind, 'mined', JSON.stringify(out));
    assert.deepEqual(chain.proxy.forwarded.slice(before), [raw], 'anvil saw exactly these bytes, once');
    assert.equal(await chain.chainRpc().getTransactionCount({ address: signer.address }), nonceBefore + 1, 'one transaction, not two');
  });
  it('refused on a resend after an uncertain attempt, with the chain RPC unreachable: uncertain, never rejected (the first attempt may have landed)', async () => {
    // A stand-in for txgate: the first submission's connection is cut after the request was
    // read (uncertain), the resend is refused by the sequencer (HTTP 200 with its error).
    let calls = 0;
    const stand = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (++calls % 2 === 1) return void res.socket?.destroy();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32003, message: 'nonce too low', data: { reason: 'upstream_rejected' } } }));
      });
    });
    await new Promise<void>((r) => stand.listen(0, '127.0.0.1', () => r()));
    const link = openLink(`http://127.0.0.1:${(stand.address() as AddressInfo).port}`, 'k', { connectTimeoutMs: 1_000, timeoutMs: 2_000 });
    try {
      const raw = await signNext(chain.anvil.url, 6);
      const settle = (chainResult: ChainResult) => new Submitter(link, chainResult).settle(raw, { maxResends: 3, deadline: performance.now() + 10_000 });
      const unreachable = await settle(async () => NO_ANSWER);
      assert.equal(unreachable.kind, 'uncertain', JSON.stringify(unreachable));
      // The same sequence with a chain RPC that answers it has no such transaction: rejected.
      const absent = await settle(async () => null);
      assert.equal(absent.kind, 'rejected', JSON.stringify(absent));
      assert.equal(calls, 4);
    } finally {
      await link.close();
      stand.close();
    }
  });
  it('is a package of its own: txgate-client, txgate-client/viem, txgate-client/ethers resolve to its build', async () => {
    const client = await import('txgate-client');
    const viem = await import('txgate-client/viem');
    const ethers = await import('txgate-client/ethers');
    assert.equal(typeof client.connectTxgate, 'function');
    assert.equal(typeof viem.txgate, 'function');
    assert.equal(typeof ethers.TxgateProvider, 'function');
  });
});
