/**
 * Refusals in each library's own error model (docs/clients.md "Reasons in viem and ethers"):
 * every reason of the client's outcome table made into an ethers error (its code, txgate's
 * reason and status on it) and a viem error (a BaseError subclass per outcome, its shortMessage
 * naming the reason and the action, docsPath to the table, no `code` for viem to rewrite); then,
 * against a real anvil and a real txgate, refusals thrown through both adapters: a 402, a 401,
 * the sequencer's "nonce too low" and "insufficient funds".
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isError, Wallet } from 'ethers';
import { BaseError, createPublicClient, createWalletClient, http } from 'viem';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { ETHERS_CODES, ethersErrorOf, SEQUENCER_CODES } from '../../packages/client/src/errors-ethers.js';
import { TxgateRejectedError, TxgateRpcError, VIEM_DOCS, VIEM_ERRORS, viemErrorOf } from '../../packages/client/src/errors-viem.js';
import { TxgateProvider } from '../../packages/client/src/ethers.js';
import { OUTCOMES, type OutcomeReason } from '../../packages/client/src/outcomes.js';
import { txgateReason } from '../../packages/client/src/reason.js';
import { ACTIONS } from '../../packages/client/src/refusal.js';
import { txgate } from '../../packages/client/src/viem.js';
import { ANVIL_KEYS, startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { MIN_TIP, newKey, startGate, type Gate } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { anvilChain, pendingNonce, sign1559, SIGNERS, signNext } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const RAW = '0x02f86c';
const HASH = '0x' + 'ab'.repeat(32);

describe('every reason, in each library', () => {
  for (const reason of Object.keys(OUTCOMES) as OutcomeReason[]) {
    const row = OUTCOMES[reason];
    it(`${reason}: ethers ${ETHERS_CODES[reason]}, viem ${VIEM_ERRORS[row.kind].name}`, () => {
      const data = { reason, txHash: HASH, ...(reason === 'rate_limited' ? { retryAfterMs: 250 } : {}) };
      const error = { code: row.code, message: `what txgate says about ${reason}`, data };
      const e = ethersErrorOf({ method: 'eth_sendRawTransaction', params: [RAW] }, error);
      assert.ok(e !== null);
      assert.ok(isError(e, ETHERS_CODES[reason]), `${e.code}`);
      const x = e as unknown as Record<string, unknown>;
      assert.equal(x.reason, reason);
      assert.equal(x.status, row.status);
      assert.equal(x.outcome, row.kind);
      assert.equal(txgateReason(e), reason);
      assert.ok(e.shortMessage.startsWith(`txgate ${reason} (${row.kind}, HTTP ${row.status}): what txgate says about ${reason}; `), e.shortMessage);

      const v = viemErrorOf('http://127.0.0.1:1', 'eth_sendRawTransaction', [RAW], error);
      assert.ok(v instanceof TxgateRpcError && v instanceof BaseError);
      assert.equal(v.name, VIEM_ERRORS[row.kind].name);
      assert.equal(v.reason, reason);
      assert.equal(v.status, row.status);
      assert.equal(v.txHash, HASH);
      assert.ok(!('code' in v), 'no code: viem would turn it into its generic class');
      assert.ok(v.shortMessage.includes(reason), v.shortMessage);
      if (reason === 'rate_limited') assert.ok(v.shortMessage.includes('after 250 ms'), v.shortMessage);
      else assert.ok(v.shortMessage.includes(ACTIONS[row.kind]), v.shortMessage);
      assert.equal(v.docsPath, VIEM_DOCS.docsPath);
      assert.ok(v.message.includes(`Docs: docs/clients.md#${VIEM_DOCS.docsSlug}`), v.message);
      assert.equal(txgateReason(v), reason);
    });
  }
  it("upstream_rejected goes by the sequencer's message, as ethers reads a node's", () => {
    const cases: [string, string][] = [
      ['insufficient funds for gas * price + value', 'INSUFFICIENT_FUNDS'],
      ['nonce too low: next nonce 5, tx nonce 3', 'NONCE_EXPIRED'],
      ['replacement transaction underpriced', 'REPLACEMENT_UNDERPRICED'],
      ['max fee per gas less than block base fee', 'UNKNOWN_ERROR'],
    ];
    for (const [message, code] of cases) {
      const e = ethersErrorOf({ method: 'eth_sendRawTransaction', params: [RAW] }, { code: -32003, message, data: { reason: 'upstream_rejected' } });
      assert.ok(e !== null);
      assert.equal(e.code, code, message);
      assert.equal((e as unknown as { reason: string }).reason, 'upstream_rejected');
      assert.ok(e.shortMessage.includes(message), e.shortMessage);
    }
    assert.equal(SEQUENCER_CODES.length, 3);
  });
  it('no connection to txgate: not sent, in both libraries (unreachable)', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const t = txgate({ url: closed, apiKey: 'txg_x', rpc: 'http://127.0.0.1:9', connectTimeoutMs: 500, timeoutMs: 1000 });
    const v = await createPublicClient({ transport: t })
      .getChainId()
      .catch((x: unknown) => x);
    assert.ok(v instanceof BaseError, String(v));
    assert.equal(txgateReason(v), 'unreachable');
    assert.ok((v as BaseError).walk((x) => x instanceof TxgateRpcError) instanceof TxgateRpcError, String(v));
    await t.close();
    const provider = new TxgateProvider({
      url: closed,
      apiKey: 'txg_x',
      rpc: 'http://127.0.0.1:9',
      chainId: DEV_CHAIN_ID,
      connectTimeoutMs: 500,
      timeoutMs: 1000,
    });
    const e = await provider.send('eth_chainId', []).catch((x: unknown) => x);
    assert.ok(isError(e, 'NETWORK_ERROR'), String(e));
    assert.equal(txgateReason(e), 'unreachable');
    await provider.close();
  });
  it('an error without a reason txgate gives is left to the library', () => {
    assert.equal(ethersErrorOf({ method: 'eth_call' }, { code: 3, message: 'execution reverted', data: '0x' }), null);
    assert.equal(ethersErrorOf({ method: 'eth_call' }, { code: -32000, message: 'x', data: { reason: 'not_a_reason' } }), null);
    assert.equal(viemErrorOf('http://x', 'eth_chainId', [], { code: -32000, message: 'x' }).name, 'RpcRequestError');
  });
});

describe('through the adapters, against anvil and txgate', () => {
  const key = newKey();
  const strictKey = newKey();
  let anvil: Anvil;
  let gate: Gate;
  let base: string;
  const chain = () => createPublicClient({ transport: http(anvil.url) });
  /** A transaction whose nonce anvil has already mined (another transaction with it): "nonce too low". */
  const stale = async (signer: number) => {
    const used = await pendingNonce(anvil.url, signer);
    const first = await signNext(anvil.url, signer, { nonce: used });
    await chain().waitForTransactionReceipt({ hash: await chain().sendRawTransaction({ serializedTransaction: first }), pollingInterval: 50 });
    return signNext(anvil.url, signer, { nonce: used, value: MIN_TIP + 1n });
  };
  /** A tipped transaction from a key with no funds: "insufficient funds". */
  const unfunded = () => sign1559({ account: privateKeyToAccount(generatePrivateKey()) });

  before(async () => {
    anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
    gate = await startGate({
      chainB: false,
      sequencers: [anvil.url],
      accounts: [
        { id: 'e', keys: [key] },
        { id: 's', keys: [strictKey] },
      ],
    });
    base = `http://127.0.0.1:${gate.port}`;
  });
  after(async () => {
    await gate.stop();
    await anvil.stop();
  });

  it('ethers: 402 and 401 are SERVER_ERROR with the reason and status; the sequencer\'s "nonce too low" is NONCE_EXPIRED, "insufficient funds" INSUFFICIENT_FUNDS', async () => {
    const provider = new TxgateProvider({ url: base, apiKey: strictKey, rpc: anvil.url, chainId: DEV_CHAIN_ID });
    const wrong = new TxgateProvider({ url: base, apiKey: 'txg_not_a_key', rpc: anvil.url, chainId: DEV_CHAIN_ID });
    const good = new TxgateProvider({ url: base, apiKey: key, rpc: anvil.url, chainId: DEV_CHAIN_ID });
    try {
      const fee = await new Wallet(ANVIL_KEYS[1]!, provider)
        .sendTransaction({ to: '0x3333333333333333333333333333333333333333', value: 1n })
        .catch((x: unknown) => x);
      assert.ok(isError(fee, 'SERVER_ERROR'), String(fee));
      assert.equal((fee as unknown as { reason: string }).reason, 'fee_rejected');
      assert.equal((fee as unknown as { status: number }).status, 402);
      assert.equal((fee.info as { responseStatus: string }).responseStatus, '402 Payment Required');
      assert.match(fee.shortMessage, /^txgate fee_rejected \(rejected, HTTP 402\): .*; final for these bytes/);

      const auth = await wrong.broadcastTransaction(await signNext(anvil.url, 1)).catch((x: unknown) => x);
      assert.ok(isError(auth, 'SERVER_ERROR'), String(auth));
      assert.equal((auth as unknown as { reason: string }).reason, 'unauthorized');
      assert.equal((auth as unknown as { status: number }).status, 401);

      const nonce = await good.broadcastTransaction(await stale(2)).catch((x: unknown) => x);
      assert.ok(isError(nonce, 'NONCE_EXPIRED'), String(nonce));
      assert.equal((nonce as unknown as { reason: string }).reason, 'upstream_rejected');
      assert.equal(txgateReason(nonce), 'upstream_rejected');

      const funds = await good.broadcastTransaction(await unfunded()).catch((x: unknown) => x);
      assert.ok(isError(funds, 'INSUFFICIENT_FUNDS'), String(funds));
      assert.equal(txgateReason(funds), 'upstream_rejected');
    } finally {
      await Promise.all([provider.close(), wrong.close(), good.close()]);
    }
  });

  it('viem: a refusal is a TxgateRejectedError naming the reason and the action, through sendRawTransaction and sendTransaction', async () => {
    const strict = txgate({ url: base, apiKey: strictKey, rpc: anvil.url });
    const good = txgate({ url: base, apiKey: key, rpc: anvil.url });
    try {
      const wallet = createWalletClient({ account: SIGNERS[3]!, transport: strict });
      const raw = await signNext(anvil.url, 3, { to: '0x3333333333333333333333333333333333333333', value: 1n });
      const direct = await wallet.sendRawTransaction({ serializedTransaction: raw }).catch((x: unknown) => x);
      assert.ok(direct instanceof TxgateRejectedError, String(direct));
      assert.equal(direct.reason, 'fee_rejected');
      assert.equal(direct.status, 402);
      assert.match(
        direct.shortMessage,
        /^txgate fee_rejected \(rejected, HTTP 402\): .*; final for these bytes: fix what the reason names before sending again\.$/,
      );

      const w2 = createWalletClient({ account: SIGNERS[3]!, chain: anvilChain(anvil.url), transport: strict });
      const wrapped = (await w2.sendTransaction({ to: '0x3333333333333333333333333333333333333333', value: 1n }).catch((x: unknown) => x)) as BaseError;
      assert.ok(wrapped instanceof BaseError);
      assert.match(wrapped.shortMessage, /^txgate fee_rejected \(rejected, HTTP 402\)/, "viem's wrapper keeps the short message");
      assert.ok(wrapped.walk((x) => x instanceof TxgateRejectedError) instanceof TxgateRejectedError);
      assert.equal(txgateReason(wrapped), 'fee_rejected');

      const nonce = await createWalletClient({ transport: good })
        .sendRawTransaction({ serializedTransaction: await stale(4) })
        .catch((x: unknown) => x);
      assert.ok(nonce instanceof TxgateRejectedError, String(nonce));
      assert.equal(nonce.reason, 'upstream_rejected');
      assert.match(nonce.shortMessage, /^txgate upstream_rejected \(rejected, HTTP 200\): .*nonce too low/i);
    } finally {
      await Promise.all([strict.close(), good.close()]);
    }
  });
});
