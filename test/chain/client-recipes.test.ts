/**
 * The client recipes of docs/clients.md for clients that do not use the kit or the adapters, run as
 * written against a real anvil and a real txgate: viem with two transports, ethers with
 * batchMaxCount 1 and staticNetwork, cast (publish --async, then the receipt on the chain RPC),
 * and curl. Each submits, gets the receipt from the chain RPC, and reads a refusal's data.reason
 * the way docs/clients.md says.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { FetchRequest, JsonRpcProvider } from 'ethers';
import { createPublicClient, createWalletClient, http, RpcRequestError, type BaseError, type Hex } from 'viem';
import { foundryBinary, startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { newKey, startGate, type Gate } from '../support/harness.js';
import { signNext } from '../support/txs.js';
import { freePort } from '../../src/base/free-port.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const key = newKey();
const strictKey = newKey(); // no untipped submissions: a 1-wei transfer elsewhere is 402
const OTHER = '0x3333333333333333333333333333333333333333' as Hex;
let anvil: Anvil;
let gate: Gate;
let base: string;

/** Runs a command without blocking this process's event loop (txgate runs in it). */
async function run(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await promisify(execFile)(file, args, { encoding: 'utf8' });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

const chain = () => createPublicClient({ transport: http(anvil.url) });
const receiptStatus = async (hash: Hex) => (await chain().waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 10_000 })).status;

before(async () => {
  anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
  gate = await startGate({
    chainB: false,
    sequencers: [anvil.url],
    accounts: [
      { id: 'r', keys: [key] },
      { id: 's', keys: [strictKey] },
    ],
  });
  base = `http://127.0.0.1:${gate.port}`;
});
after(async () => {
  await gate.stop();
  await anvil.stop();
});

describe('recipes (docs/clients.md "Without the kit")', () => {
  it('viem, two transports: sendRawTransaction through txgate (no retries), the receipt from the chain RPC', async () => {
    const gateClient = createWalletClient({ transport: http(base, { fetchOptions: { headers: { 'x-api-key': key } }, retryCount: 0 }) });
    const hash = await gateClient.sendRawTransaction({ serializedTransaction: await signNext(anvil.url, 0) });
    assert.equal(await receiptStatus(hash), 'success');
    const strict = createWalletClient({ transport: http(base, { fetchOptions: { headers: { 'x-api-key': strictKey } }, retryCount: 0 }) });
    const e = (await strict
      .sendRawTransaction({ serializedTransaction: await signNext(anvil.url, 0, { to: OTHER, value: 1n }) })
      .catch((x: unknown) => x)) as BaseError;
    const inner = e.walk((x) => x instanceof RpcRequestError) as RpcRequestError;
    assert.equal((inner.data as { reason: string }).reason, 'fee_rejected');
    assert.equal(inner.status, 402);
  });
  it("ethers: batchMaxCount 1, staticNetwork, send('eth_sendRawTransaction'); a refusal's body in error.info.responseBody", async () => {
    const req = new FetchRequest(base);
    req.setHeader('x-api-key', key);
    const provider = new JsonRpcProvider(req, DEV_CHAIN_ID, { batchMaxCount: 1, staticNetwork: true });
    const strictReq = new FetchRequest(base);
    strictReq.setHeader('x-api-key', strictKey);
    const strict = new JsonRpcProvider(strictReq, DEV_CHAIN_ID, { batchMaxCount: 1, staticNetwork: true });
    try {
      const hash = (await provider.send('eth_sendRawTransaction', [await signNext(anvil.url, 1)])) as Hex;
      assert.equal(await receiptStatus(hash), 'success');
      const e = (await strict.send('eth_sendRawTransaction', [await signNext(anvil.url, 1, { to: OTHER, value: 1n })]).catch((x: unknown) => x)) as {
        code: string;
        info: { responseBody: string };
      };
      assert.equal(e.code, 'SERVER_ERROR');
      assert.equal(JSON.parse(e.info.responseBody).error.data.reason, 'fee_rejected');
    } finally {
      provider.destroy();
      strict.destroy();
    }
  });
  it('cast: publish --async with --rpc-headers, then cast receipt on the chain RPC', async () => {
    const cast = foundryBinary('cast');
    const raw = await signNext(anvil.url, 2);
    const pub = await run(cast, ['publish', '--async', '--rpc-url', base, '--rpc-headers', `X-Api-Key: ${key}`, raw]);
    assert.equal(pub.code, 0, pub.stderr);
    const hash = pub.stdout.trim();
    assert.match(hash, /^0x[0-9a-f]{64}$/);
    await receiptStatus(hash as Hex);
    const receipt = await run(cast, ['receipt', '--rpc-url', anvil.url, hash, 'status']);
    assert.match(receipt.stdout.trim(), /^(true|1|1 \(success\))$/, receipt.stdout + receipt.stderr); // cast prints the status field (true: 0x1)
    // A 400 prints txgate's JSON-RPC error with its reason; a 402 only the status (and X-Request-Id).
    const refused = await run(cast, ['publish', '--async', '--rpc-url', base, '--rpc-headers', `X-Api-Key: ${key}`, '0x02c0']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /invalid_transaction|invalid_params|unsigned_transaction/);
    const paid = await run(cast, [
      'publish',
      '--async',
      '--rpc-url',
      base,
      '--rpc-headers',
      `X-Api-Key: ${strictKey}`,
      await signNext(anvil.url, 2, { to: OTHER, value: 1n }),
    ]);
    assert.notEqual(paid.code, 0);
    assert.match(paid.stderr, /402/);
    assert.match(paid.stderr, /x-request-id/i);
  });
  it('curl: the submission, and a refusal with its reason in the body', async () => {
    const body = (raw: string) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] });
    const ok = await run('curl', ['-s', '-H', 'content-type: application/json', '-H', `x-api-key: ${key}`, '-d', body(await signNext(anvil.url, 3)), base]);
    const hash = JSON.parse(ok.stdout).result as Hex;
    assert.equal(await receiptStatus(hash), 'success');
    const refused = await run('curl', [
      '-s',
      '-w',
      '\\n%{http_code}',
      '-H',
      'content-type: application/json',
      '-H',
      `x-api-key: ${strictKey}`,
      '-d',
      body(await signNext(anvil.url, 3, { to: OTHER, value: 1n })),
      base,
    ]);
    const [json, status] = refused.stdout.split('\n');
    assert.equal(status, '402');
    assert.equal(JSON.parse(json!).error.data.reason, 'fee_rejected');
  });
});
