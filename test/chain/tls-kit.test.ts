/**
 * The client kit, viem and ethers over https:// and wss:// against a real anvil behind txgate
 * with TLS on its public port, trusting a throw-away CA (openssl) with `ca`. TLS on the port
 * itself: test/e2e/tls-serving.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { createPublicClient, createWalletClient, http, type Hex } from 'viem';
import { ANVIL_KEYS, startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { connectTxgate } from '../../packages/client/src/index.js';
import { TxgateProvider } from '../../packages/client/src/ethers.js';
import { txgate } from '../../packages/client/src/viem.js';
import { MIN_TIP, newKey, TIP } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { SIGNERS, signNext, anvilChain } from '../support/txs.js';
import { makeCa, makeLeaf, type Leaf, type TestCa } from '../support/tls-certs.js';
import { useGate } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';
import { tempDir } from '../support/temp-dir.js';

let dir: string;
let ca: TestCa;
let def: Leaf;

before(() => {
  dir = tempDir('txgate-tls-kit-');
  ca = makeCa(dir);
  def = makeLeaf(ca, 'default.test', { stem: 'default' });
});

describe('the client kit, viem and ethers over https:// and wss://, against anvil, trusting the CA with `ca`', () => {
  let anvil: Anvil;
  const k = newKey();

  const g = useGate(async () => {
    anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
    return {
      chainB: false,
      sequencers: [anvil.url],
      accounts: [{ id: 'mm', keys: [k], allowUntipped: true }],
      config: {
        allowUntipped: true,
        websocket: { enabled: true },
        listen: { host: '127.0.0.1', port: 0, tls: { enabled: true, certFile: def.certFile, keyFile: def.keyFile } },
      },
    };
  });
  after(async () => {
    await anvil.stop();
  });

  it('the kit over wss:// and over https://: connect checks the chain id, submitAndWait is mined', async () => {
    for (const url of [`wss://localhost:${g.port}`, `https://localhost:${g.port}`]) {
      const gate = await connectTxgate({ url, apiKey: k, chainId: DEV_CHAIN_ID, chainRpcUrl: anvil.url, ca: ca.pem });
      try {
        const raw = await signNext(anvil.url, 0);
        const mined = await gate.submitAndWait(raw, { timeoutMs: 20_000 });
        assert.equal(mined.kind, 'mined', `${url}: ${JSON.stringify(mined)}`);
        assert.ok(Array.isArray((await gate.tipAddresses()).tipAddresses), 'GET /tip-addresses over https');
      } finally {
        await gate.close();
      }
    }
  });

  it('the kit without the CA: connect fails (the certificate is not trusted), nothing sent', async () => {
    const e = await connectTxgate({ url: `https://localhost:${g.port}`, apiKey: k, chainId: DEV_CHAIN_ID, chainRpcUrl: anvil.url }).catch((err: Error) => err);
    assert.ok(e instanceof Error);
  });

  it('viem: txgate({ url: "https://…", ca }) — sendTransaction works unmodified and is mined', async () => {
    const wallet = createWalletClient({
      account: SIGNERS[1]!,
      chain: anvilChain(anvil.url),
      transport: txgate({ url: `https://localhost:${g.port}`, apiKey: k, rpc: anvil.url, ca: ca.pem }),
    });
    const hash = await wallet.sendTransaction({ to: TIP as Hex, value: MIN_TIP, chain: anvilChain(anvil.url) });
    const receipt = await createPublicClient({ transport: http(anvil.url) }).waitForTransactionReceipt({ hash, timeout: 20_000 });
    assert.equal(receipt.status, 'success');
  });

  it('ethers: TxgateProvider({ url: "https://…", ca }) — wallet.sendTransaction and tx.wait() work', async () => {
    const provider = new TxgateProvider({
      url: `https://localhost:${g.port}`,
      apiKey: k,
      rpc: anvil.url,
      chainId: DEV_CHAIN_ID,
      pollingInterval: 200,
      ca: ca.pem,
    });
    try {
      const wallet = new Wallet(ANVIL_KEYS[2]!, provider);
      const sent = await wallet.sendTransaction({ to: TIP, value: MIN_TIP });
      const receipt = await sent.wait(1, 20_000);
      assert.equal(receipt?.status, 1);
      assert.ok(
        g.logs.some((l) => l.includes(sent.hash)),
        'it went through txgate',
      );
    } finally {
      provider.destroy();
    }
  });
});
