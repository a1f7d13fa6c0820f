/**
 * A TLS failure is named by the client kit and both adapters with its cause (the certificate not
 * trusted, issued for another name, no TLS on the other side), in their error model (`tls` on the
 * kit's TxgateError, on the viem error and the ethers error, `data.tls` on the JSON-RPC error),
 * never as "did not answer eth_chainId"; and it is `unreachable`: a handshake that failed sent
 * nothing. A txgate serving TLS with a throw-away CA's certificate (openssl), on 127.0.0.2 so
 * that a URL naming that address is a name the certificate does not carry.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isError } from 'ethers';
import { BaseError, createPublicClient } from 'viem';
import { TxgateRpcError } from '../../packages/client/src/errors-viem.js';
import { TxgateProvider } from '../../packages/client/src/ethers.js';
import { connectTxgate, TxgateError } from '../../packages/client/src/index.js';
import { txgateReason } from '../../packages/client/src/reason.js';
import { txgate } from '../../packages/client/src/viem.js';
import { newKey, startGate, type Gate } from '../support/harness.js';
import { StubSequencer } from '../support/stub-sequencer.js';
import { makeCa, makeLeaf, type TestCa } from '../support/tls-certs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const key = newKey();
let dir: string;
let ca: TestCa;
let gate: Gate;
let plain: StubSequencer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'txgate-client-tls-'));
  ca = makeCa(dir);
  // For localhost and 127.0.0.1 (and the name): not 127.0.0.2, where the gate listens.
  const leaf = makeLeaf(ca, 'edge.test');
  plain = await new StubSequencer().start();
  gate = await startGate({
    sequencers: [plain.url],
    chainB: false,
    accounts: [{ id: 'desk', keys: [key] }],
    config: {
      listen: { host: '127.0.0.2', port: 0, tls: { enabled: true, certFile: leaf.certFile, keyFile: leaf.keyFile } },
      websocket: { enabled: true },
    },
    chainA: { hosts: ['localhost', '127.0.0.1', '127.0.0.2'] },
  });
});
after(async () => {
  await gate.stop();
  await plain.stop();
  rmSync(dir, { recursive: true, force: true });
});

const kit = (url: string, withCa: boolean) =>
  connectTxgate({
    url,
    apiKey: key,
    chainId: DEV_CHAIN_ID,
    chainRpcUrl: plain.url,
    connectTimeoutMs: 2000,
    timeoutMs: 3000,
    ...(withCa ? { ca: ca.pem } : {}),
  });

async function kitError(url: string, withCa: boolean): Promise<TxgateError> {
  const e = await kit(url, withCa).then(
    async (g) => {
      await g.close();
      return null;
    },
    (x: unknown) => x,
  );
  assert.ok(e instanceof TxgateError, String(e));
  return e;
}

describe('the client kit: a TLS failure names its cause', () => {
  for (const scheme of ['https', 'wss'] as const) {
    it(`${scheme}: a certificate from a CA the client does not trust: certificate_untrusted, unreachable`, async () => {
      const e = await kitError(`${scheme}://127.0.0.2:${gate.port}`, false);
      assert.equal(e.tls, 'certificate_untrusted', e.message);
      assert.equal(e.reason, 'unreachable');
      assert.match(e.message, /TLS failed \(certificate_untrusted\): .*certificate.*(ca|NODE_EXTRA_CA_CERTS)/, e.message);
      assert.doesNotMatch(e.message, /did not answer eth_chainId/);
    });
    it(`${scheme}: trusted, but issued for other names than the URL's: hostname_mismatch`, async () => {
      const e = await kitError(`${scheme}://127.0.0.2:${gate.port}`, true);
      assert.equal(e.tls, 'hostname_mismatch', e.message);
      assert.equal(e.reason, 'unreachable');
    });
    it(`${scheme}:// on a plain HTTP port: tls_protocol`, async () => {
      const e = await kitError(`${scheme}://127.0.0.1:${plain.port}`, true);
      assert.equal(e.tls, 'tls_protocol', e.message);
      assert.match(e.message, /plain HTTP port/);
    });
  }
});

describe('the adapters: the same cause in each library', () => {
  it('viem: the TxgateRpcError in the cause chain carries tls, its message the cause', async () => {
    const t = txgate({ url: `https://127.0.0.2:${gate.port}`, apiKey: key, rpc: plain.url, connectTimeoutMs: 2000, timeoutMs: 3000 });
    const v = await createPublicClient({ transport: t })
      .getChainId()
      .catch((x: unknown) => x);
    await t.close();
    assert.ok(v instanceof BaseError, String(v));
    const inner = v.walk((x) => x instanceof TxgateRpcError) as TxgateRpcError | null;
    assert.ok(inner !== null, String(v));
    assert.equal(inner.tls, 'certificate_untrusted');
    assert.equal(txgateReason(v), 'unreachable');
    assert.match(inner.shortMessage, /certificate_untrusted/);
  });
  it('ethers: NETWORK_ERROR with tls, its message the cause', async () => {
    const provider = new TxgateProvider({
      url: `https://127.0.0.2:${gate.port}`,
      apiKey: key,
      rpc: plain.url,
      chainId: DEV_CHAIN_ID,
      connectTimeoutMs: 2000,
      timeoutMs: 3000,
    });
    const e = await provider.send('eth_chainId', []).catch((x: unknown) => x);
    await provider.close();
    assert.ok(isError(e, 'NETWORK_ERROR'), String(e));
    assert.equal((e as unknown as { tls?: string }).tls, 'certificate_untrusted');
    assert.match((e as Error).message, /certificate_untrusted/);
  });
});
