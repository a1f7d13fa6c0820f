/**
 * A URL whose scheme does not match the port (https:// or wss:// on txgate's plain port; http://
 * or ws:// on its TLS port) is named by the client kit and both adapters as `tls_protocol`, with
 * the fix in the message (docs/clients.md, the client kit), never "did not answer eth_chainId".
 * Two real gates: one plain, one serving TLS with a throw-away CA (openssl). A short connect
 * bound: an https:// URL on the plain port fails only when it runs out (the port reads the
 * ClientHello and waits), and the file should not wait the default 3 s each time.
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
let tls: Gate;
let plain: Gate;
let seq: StubSequencer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'txgate-scheme-'));
  ca = makeCa(dir);
  const leaf = makeLeaf(ca, 'localhost');
  seq = await new StubSequencer().start();
  const common = { sequencers: [seq.url], chainB: false, accounts: [{ id: 'desk', keys: [key] }] };
  tls = await startGate({
    ...common,
    config: { listen: { host: '127.0.0.1', port: 0, tls: { enabled: true, certFile: leaf.certFile, keyFile: leaf.keyFile } }, websocket: { enabled: true } },
  });
  plain = await startGate({ ...common, config: { websocket: { enabled: true } } });
});
after(async () => {
  await tls.stop();
  await plain.stop();
  await seq.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function kitError(url: string): Promise<TxgateError> {
  const e = await connectTxgate({ url, apiKey: key, chainId: DEV_CHAIN_ID, chainRpcUrl: seq.url, connectTimeoutMs: 500, timeoutMs: 1500, ca: ca.pem }).then(
    async (g) => {
      await g.close();
      return null;
    },
    (x: unknown) => x,
  );
  assert.ok(e instanceof TxgateError, String(e));
  return e;
}

/** The four mismatches: the URL as given, and the one the message must name. */
const CASES = () =>
  [
    [`https://localhost:${plain.port}`, `http://localhost:${plain.port}`],
    [`wss://localhost:${plain.port}`, `ws://localhost:${plain.port}`],
    [`http://localhost:${tls.port}`, `https://localhost:${tls.port}`],
    [`ws://localhost:${tls.port}`, `wss://localhost:${tls.port}`],
  ] as const;

describe('the kit names a scheme that does not match the port, with the URL to use', () => {
  for (const i of [0, 1, 2, 3]) {
    it(`case ${i}: tls_protocol, unreachable, the right URL in the message`, async () => {
      const [url, fix] = CASES()[i]!;
      const e = await kitError(url);
      assert.equal(e.tls, 'tls_protocol', e.message);
      assert.equal(e.reason, 'unreachable');
      assert.ok(e.message.includes(`use ${fix}`), e.message);
      assert.doesNotMatch(e.message, /did not answer eth_chainId/);
    });
  }
  it('the right scheme on each port still connects (the question is asked only after a failure)', async () => {
    for (const url of [`http://localhost:${plain.port}`, `ws://localhost:${plain.port}`, `https://localhost:${tls.port}`, `wss://localhost:${tls.port}`]) {
      const g = await connectTxgate({ url, apiKey: key, chainId: DEV_CHAIN_ID, chainRpcUrl: seq.url, ca: ca.pem });
      await g.close();
    }
  });
  it('a port where nothing listens stays "did not answer" (no server to ask)', async () => {
    const e = await kitError('https://localhost:9');
    assert.equal(e.tls, undefined, e.message);
    assert.equal(e.reason, 'unreachable');
  });
});

describe('the adapters name it too', () => {
  for (const i of [0, 2]) {
    it(`viem, case ${i}: the TxgateRpcError carries tls_protocol and the URL to use`, async () => {
      const [url, fix] = CASES()[i]!;
      const t = txgate({ url, apiKey: key, rpc: seq.url, connectTimeoutMs: 500, timeoutMs: 1500, ca: ca.pem });
      const v = await createPublicClient({ transport: t })
        .getChainId()
        .catch((x: unknown) => x);
      await t.close();
      assert.ok(v instanceof BaseError, String(v));
      const inner = v.walk((x) => x instanceof TxgateRpcError) as TxgateRpcError | null;
      assert.ok(inner !== null, String(v));
      assert.equal(inner.tls, 'tls_protocol');
      assert.equal(txgateReason(v), 'unreachable');
      assert.ok(inner.shortMessage.includes(`use ${fix}`), inner.shortMessage);
    });
    it(`ethers, case ${i + 1}: NETWORK_ERROR with tls_protocol and the URL to use`, async () => {
      const [url, fix] = CASES()[i + 1]!;
      const provider = new TxgateProvider({ url, apiKey: key, rpc: seq.url, chainId: DEV_CHAIN_ID, connectTimeoutMs: 500, timeoutMs: 1500, ca: ca.pem });
      const e = await provider.send('eth_chainId', []).catch((x: unknown) => x);
      await provider.close();
      assert.ok(isError(e, 'NETWORK_ERROR'), String(e));
      assert.equal((e as unknown as { tls?: string }).tls, 'tls_protocol');
      assert.ok((e as Error).message.includes(`use ${fix}`), (e as Error).message);
    });
  }
});
