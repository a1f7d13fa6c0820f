/**
 * The viem transport (txgate-client/viem) and the ethers provider (txgate-client/ethers) against
 * a real anvil and a real txgate: unmodified wallet code through each, refusals carrying
 * data.reason, sent once. The kit itself: client-kit.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BaseError, createPublicClient, createWalletClient, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { TxgateProvider, txgateReason as ethersReason } from '../../packages/client/src/ethers.js';
import { txgate, txgateReason as viemReason } from '../../packages/client/src/viem.js';
import { ANVIL_KEYS } from '../../src/dev/anvil.js';
import { MIN_TIP, newKey, TIP } from '../support/harness.js';
import { useClientChain } from '../support/client-chain.js';
import { anvilChain, signNext } from '../support/txs.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const chain = useClientChain();
const { key, strictKey } = chain.keys;

describe('txgate-client/viem', () => {
  it('walletClient.sendTransaction and waitForTransactionReceipt, unmodified: receipt 0x1', async () => {
    const transport = txgate({ url: chain.base, apiKey: key, rpc: chain.anvil.url });
    const wallet = createWalletClient({ account: privateKeyToAccount(ANVIL_KEYS[0] as Hex), chain: anvilChain(chain.base), transport });
    const client = createPublicClient({ chain: anvilChain(chain.base), transport });
    const hash = await wallet.sendTransaction({ to: TIP as Hex, value: MIN_TIP });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10_000 });
    assert.equal(receipt.status, 'success');
    assert.ok(chain.proxy.forwarded.length > 0, 'the submission went through txgate');
  });
  it('a refusal is a viem error carrying data.reason, sent once (no retries)', async () => {
    const transport = txgate({ url: chain.base, apiKey: strictKey, rpc: chain.anvil.url });
    const wallet = createWalletClient({ account: privateKeyToAccount(ANVIL_KEYS[1] as Hex), chain: anvilChain(chain.base), transport });
    const before = chain.gate.logs.length;
    const e = await wallet.sendTransaction({ to: '0x3333333333333333333333333333333333333333', value: 1n }).catch((x: unknown) => x);
    assert.equal(viemReason(e), 'fee_rejected');
    const lines = chain.gate.logs
      .slice(before)
      .map((l) => JSON.parse(l))
      .filter((l) => l.method === 'eth_sendRawTransaction');
    assert.equal(lines.length, 1, 'one attempt: a 402 is not retried');
  });
  it("errors made by a second copy of viem (a client project's own) still give txgateReason, by shape: 402 and 401", async () => {
    // The client project's viem is not the one this package resolves: a real copy of viem's ESM
    // build under another path, so its classes (BaseError, RpcRequestError…) are other classes.
    const copy = mkdtempSync(join(process.cwd(), 'node_modules', '.viem-copy-'));
    try {
      const src = join(process.cwd(), 'node_modules', 'viem');
      cpSync(join(src, 'package.json'), join(copy, 'viem', 'package.json'));
      cpSync(join(src, '_esm'), join(copy, 'viem', '_esm'), { recursive: true });
      cpSync(join(src, 'node_modules'), join(copy, 'viem', 'node_modules'), { recursive: true });
      const theirs = (await import(pathToFileURL(join(copy, 'viem', '_esm', 'index.js')).href)) as typeof import('viem');
      const theirAccounts = (await import(pathToFileURL(join(copy, 'viem', '_esm', 'accounts', 'index.js')).href)) as typeof import('viem/accounts');
      assert.notEqual(theirs.BaseError, BaseError, 'two copies of viem');
      for (const [apiKey, reason] of [
        [strictKey, 'fee_rejected'],
        [newKey(), 'unauthorized'],
      ] as const) {
        const wallet = theirs.createWalletClient({
          account: theirAccounts.privateKeyToAccount(ANVIL_KEYS[1] as Hex),
          chain: anvilChain(chain.base),
          transport: txgate({ url: chain.base, apiKey, rpc: chain.anvil.url }),
        });
        const e = await wallet.sendTransaction({ to: '0x3333333333333333333333333333333333333333', value: 1n }).catch((x: unknown) => x);
        assert.ok(e instanceof theirs.BaseError && !(e instanceof BaseError), 'the error is of the other copy');
        assert.equal(viemReason(e), reason);
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});

describe('txgate-client/ethers', () => {
  it('wallet.sendTransaction and tx.wait(), unmodified: status 1', async () => {
    const provider = new TxgateProvider({ url: chain.base, apiKey: key, rpc: chain.anvil.url, chainId: DEV_CHAIN_ID, pollingInterval: 50 });
    try {
      const wallet = new Wallet(ANVIL_KEYS[2]!, provider);
      const tx = await wallet.sendTransaction({ to: TIP, value: MIN_TIP });
      const receipt = await tx.wait(1, 10_000);
      assert.equal(receipt?.status, 1);
    } finally {
      provider.destroy();
    }
  });
  it('provider.broadcastTransaction (which asks for the block number beside it): status 1', async () => {
    const provider = new TxgateProvider({ url: chain.base, apiKey: key, rpc: chain.anvil.url, pollingInterval: 50 });
    try {
      const raw = await signNext(chain.anvil.url, 3);
      const tx = await provider.broadcastTransaction(raw);
      const receipt = await tx.wait(1, 10_000);
      assert.equal(receipt?.status, 1);
    } finally {
      provider.destroy();
    }
  });
  it('a refusal carries data.reason', async () => {
    const provider = new TxgateProvider({ url: chain.base, apiKey: strictKey, rpc: chain.anvil.url, chainId: DEV_CHAIN_ID });
    try {
      const e = await provider
        .broadcastTransaction(await signNext(chain.anvil.url, 4, { to: '0x3333333333333333333333333333333333333333', value: 1n }))
        .catch((x: unknown) => x);
      assert.equal(ethersReason(e), 'fee_rejected');
    } finally {
      provider.destroy();
    }
  });
});
