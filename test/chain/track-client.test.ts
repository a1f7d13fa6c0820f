/**
 * The client kit on a tracking edge, against a real anvil mining every second: `status`,
 * `watch` (pushed over ws://, polled over http://), and `submitAndWait` waiting on the edge's
 * status (one receipt read from the chain RPC at the end, no polling of its own), including a
 * replacement; on an edge that does not track, `status` says so and `submitAndWait` polls the
 * receipt as ever.
 */
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connectTxgate, type Txgate, TxgateError } from '../../packages/client/src/index.js';
import type { TxStatus } from '../../packages/client/src/status.js';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { eventually, newKey, startGate, type Gate } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { pendingNonce, signNext } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const key = newKey();
const accounts = [{ id: 'desk', keys: [key], allowUntipped: true }];
let anvil: Anvil;
let gate: Gate;
let gateOff: Gate;
let proxy: Server;
let proxyUrl: string;
/** The chain RPC methods the kit called through the proxy. */
const called: string[] = [];

before(async () => {
  anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID, blockTime: 1 });
  const config = { allowUntipped: true, websocket: { enabled: true } };
  gate = await startGate({
    chainB: false,
    sequencers: [anvil.url],
    accounts,
    config,
    chainA: { rpc: anvil.url, track: { enabled: true, pollMs: 100, dropAfterBlocks: 2, dropAfterMs: 0 } },
  });
  gateOff = await startGate({ chainB: false, sequencers: [anvil.url], accounts, config });
  // The kit's chain RPC, through a proxy that counts what it asks.
  const target = new URL(anvil.url);
  proxy = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      try {
        called.push(...[JSON.parse(body)].flat().map((m: { method: string }) => m.method));
      } catch {
        /* not JSON: anvil answers it */
      }
      const out = request({ host: target.hostname, port: target.port, method: 'POST', path: '/', headers: { 'content-type': 'application/json' } }, (r) => {
        res.writeHead(r.statusCode ?? 502, { 'content-type': 'application/json' });
        r.pipe(res);
      });
      out.end(body);
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
after(async () => {
  await Promise.all([gate.stop(), gateOff.stop()]);
  proxy.closeAllConnections();
  proxy.close();
  await anvil.stop();
});

const kitOn = (g: Gate, scheme: 'http' | 'ws'): Promise<Txgate> =>
  connectTxgate({ url: `${scheme}://localhost:${g.port}`, apiKey: key, chainId: DEV_CHAIN_ID, chainRpcUrl: proxyUrl });

describe('the client kit on a tracking edge', () => {
  for (const scheme of ['http', 'ws'] as const)
    it(`${scheme}://: submitAndWait waits on the edge's status (one receipt read, no polling); status and watch`, async () => {
      const kit = await kitOn(gate, scheme);
      try {
        called.length = 0;
        const raw = await signNext(anvil.url, scheme === 'http' ? 1 : 2);
        const out = await kit.submitAndWait(raw, { timeoutMs: 20_000 });
        assert.equal(out.kind, 'mined', JSON.stringify(out));
        if (out.kind !== 'mined') return;
        assert.equal(out.status, 'success');
        assert.equal(out.receipt.transactionHash, out.hash);
        assert.equal(called.filter((m) => m === 'eth_getTransactionReceipt').length, 1, `the kit read the receipt once: ${called.join(', ')}`);
        const s = await kit.status(out.hash);
        assert.deepEqual([s.status, s.source, s.final, s.block?.number], ['included', 'edge', true, Number(out.receipt.blockNumber)]);
        // watch from a fresh submission: each change once, in version order, ending at the final one.
        const next = await kit.submit(await signNext(anvil.url, scheme === 'http' ? 1 : 2));
        assert.equal(next.kind, 'accepted');
        const seen: TxStatus[] = [];
        for await (const change of kit.watch(next.hash, { timeoutMs: 20_000 })) seen.push(change);
        assert.equal(seen.at(-1)?.status, 'included');
        const versions = seen.map((c) => c.version!);
        assert.deepEqual(
          versions,
          [...versions].sort((a, b) => a - b),
        );
        assert.equal(new Set(versions).size, versions.length);
      } finally {
        await kit.close();
      }
    });

  it('submitAndWait of a transaction replaced by the same nonce: replaced, with the replacement', async () => {
    const kit = await kitOn(gate, 'ws');
    try {
      const n = await pendingNonce(anvil.url, 3);
      const first = await signNext(anvil.url, 3, { nonce: n + 1 });
      const waiting = kit.submitAndWait(first, { timeoutMs: 30_000 });
      // The replacement goes only once the first is accepted (else the sequencer may take it first
      // and refuse the first as underpriced: the two submissions race on the lane).
      const firstHash = await kit.hashOf(first);
      await eventually(async () => (await kit.status(firstHash)).status === 'pending', 10_000);
      const replacement = await kit.submit(await signNext(anvil.url, 3, { nonce: n + 1, maxFeePerGas: 3n * 10n ** 10n }));
      await kit.submit(await signNext(anvil.url, 3, { nonce: n }));
      const out = await waiting;
      assert.deepEqual(out, { kind: 'replaced', hash: await kit.hashOf(first), replacedBy: replacement.hash });
    } finally {
      await kit.close();
    }
  });

  it('an edge that does not track: status says so (method_not_found); submitAndWait polls the receipt as ever', async () => {
    const kit = await kitOn(gateOff, 'http');
    try {
      await assert.rejects(kit.status('0x' + '11'.repeat(32)), (e: unknown) => e instanceof TxgateError && e.reason === 'method_not_found');
      const out = await kit.submitAndWait(await signNext(anvil.url, 4), { timeoutMs: 20_000 });
      assert.equal(out.kind, 'mined');
    } finally {
      await kit.close();
    }
  });
});
