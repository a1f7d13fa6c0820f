/**
 * A program that used the lane ends by itself (docs/clients.md "Ending a program"): scripts a
 * desk would write, importing `txgate-client` and `txgate-client/viem` by their package names,
 * run as their own processes against a real anvil and a real txgate with the WebSocket transport;
 * each submits over `ws://`, prints its outcome, never calls close(), and must exit 0 by itself.
 * A script whose call is still in flight is not cut short: it waits for the answer.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { newKey } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { signNext } from '../support/txs.js';
import { useGate } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const key = newKey();
let anvil: Anvil;
let dir: string;

/** Where the scripts live: inside the checkout, so `txgate-client` resolves as in a desk's project. */
const ROOT = join(import.meta.dirname, '../../..');

/**
 * Runs a script to its end; a hang is ended by the test after `ms` (reported as a null code and
 * the signal), never counted as an exit.
 */
function run(file: string, env: Record<string, string>, ms = 60_000): Promise<{ code: number | null; signal: string | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [file], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const t = setTimeout(() => p.kill('SIGKILL'), ms);
    p.on('exit', (code, signal) => {
      clearTimeout(t);
      resolve({ code, signal, out });
    });
  });
}

const gate = useGate(async () => {
  anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
  dir = mkdtempSync(join(ROOT, '.client-exit-'));
  return { chainB: false, sequencers: [anvil.url], accounts: [{ id: 'x', keys: [key] }], config: { websocket: { enabled: true } } };
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await anvil.stop();
});

describe('a script over ws:// without close() exits by itself', () => {
  it('the kit: submitAndWait, print the outcome, end', async () => {
    const file = join(dir, 'kit.mjs');
    writeFileSync(
      file,
      `import { connectTxgate } from 'txgate-client';
const gate = await connectTxgate({ url: process.env.TXGATE_URL, apiKey: process.env.TXGATE_API_KEY, chainId: ${DEV_CHAIN_ID}, chainRpcUrl: process.env.CHAIN_RPC_URL });
const out = await gate.submitAndWait(process.env.SIGNED_TX, { timeoutMs: 30_000 });
console.log(out.kind, out.kind === 'mined' ? out.status : '');
`,
    );
    const r = await run(file, {
      TXGATE_URL: `ws://127.0.0.1:${gate.port}`,
      TXGATE_API_KEY: key,
      CHAIN_RPC_URL: anvil.url,
      SIGNED_TX: await signNext(anvil.url, 0),
    });
    assert.equal(r.signal, null, `killed: it did not exit by itself\n${r.out}`);
    assert.equal(r.code, 0, r.out);
    assert.equal(r.out.trim(), 'mined success');
  });

  it('the viem transport: sendRawTransaction, print the hash, end', async () => {
    const file = join(dir, 'viem.mjs');
    writeFileSync(
      file,
      `import { createWalletClient } from 'viem';
import { txgate } from 'txgate-client/viem';
const wallet = createWalletClient({ transport: txgate({ url: process.env.TXGATE_URL, apiKey: process.env.TXGATE_API_KEY, rpc: process.env.CHAIN_RPC_URL }) });
console.log(await wallet.sendRawTransaction({ serializedTransaction: process.env.SIGNED_TX }));
`,
    );
    const raw = await signNext(anvil.url, 1);
    const r = await run(file, { TXGATE_URL: `ws://127.0.0.1:${gate.port}`, TXGATE_API_KEY: key, CHAIN_RPC_URL: anvil.url, SIGNED_TX: raw });
    assert.equal(r.signal, null, `killed: it did not exit by itself\n${r.out}`);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out.trim(), /^0x[0-9a-f]{64}$/);
  });

  it('the ethers provider: broadcastTransaction, print the hash, end', async () => {
    const file = join(dir, 'ethers.mjs');
    writeFileSync(
      file,
      `import { TxgateProvider } from 'txgate-client/ethers';
const provider = new TxgateProvider({ url: process.env.TXGATE_URL, apiKey: process.env.TXGATE_API_KEY, rpc: process.env.CHAIN_RPC_URL, chainId: ${DEV_CHAIN_ID} });
console.log((await provider.broadcastTransaction(process.env.SIGNED_TX)).hash);
`,
    );
    const r = await run(file, {
      TXGATE_URL: `ws://127.0.0.1:${gate.port}`,
      TXGATE_API_KEY: key,
      CHAIN_RPC_URL: anvil.url,
      SIGNED_TX: await signNext(anvil.url, 2),
    });
    assert.equal(r.signal, null, `killed: it did not exit by itself\n${r.out}`);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out.trim(), /^0x[0-9a-f]{64}$/);
  });

  it('a call in flight keeps the script alive until its answer (the idle connection does not)', async () => {
    // The chain id is asked over the lane with nothing else to do: the script must print the answer.
    const file = join(dir, 'inflight.mjs');
    writeFileSync(
      file,
      `import { openLink } from ${JSON.stringify(join(ROOT, 'dist/packages/client/src/link.js'))};
const link = openLink(process.env.TXGATE_URL, process.env.TXGATE_API_KEY, { connectTimeoutMs: 3000, timeoutMs: 10000 });
link.call('eth_chainId', [], false).then((a) => console.log(a.kind, a.result));
`,
    );
    const r = await run(file, { TXGATE_URL: `ws://127.0.0.1:${gate.port}`, TXGATE_API_KEY: key });
    assert.equal(r.signal, null, r.out);
    assert.equal(r.code, 0, r.out);
    assert.equal(r.out.trim(), 'result 0x1237');
  });
});
