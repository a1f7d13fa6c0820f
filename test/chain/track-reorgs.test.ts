/**
 * The watcher after the chain does something unusual (docs/tracking.md#how-the-watcher-works-and-what-it-costs), against a
 * real anvil that mines a block per transaction (block time 0, automine): a reorg at the same
 * height, a deeper one (3 blocks), a rollback (the head goes backwards), 100 blocks mined at
 * once. After each, the next accepted transaction reaches `included`, and the watcher's head is
 * the chain's; once with polling, once with the chain RPC's head subscription (`rpcWs`).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Hex } from 'viem';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { eventually, MIN_TIP, newKey, startGate, type Gate } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { rpc, send } from '../support/http.js';
import { signNext } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const key = newKey();
const accounts = [{ id: 'desk', keys: [key], allowUntipped: true }];
const TRACK = { enabled: true, dropAfterBlocks: 2, dropAfterMs: 0, pollMs: 100 };
let chain: Anvil;
let sent = 0;

before(async () => {
  chain = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
});
after(() => chain.stop());

const chainCall = async (method: string, params: unknown[]) => (await rpc(Number(new URL(chain.url).port), method, params)).json;
const headOf = async () => Number((await chainCall('eth_blockNumber', [])).result);

/** The next transfer of `signer`, bytes of their own each time (a rollback or a reorg frees the nonce: the same bytes would be a resend). */
const signed = (signer: number): Promise<Hex> => signNext(chain.url, signer, { value: MIN_TIP + BigInt(++sent) });

const status = async (g: Gate, hash: string) => {
  const r = await rpc(g.port, 'txgate_getTransactionStatus', [hash], { key });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.result as Record<string, any>;
};

/** Submits a new transaction of `signer`: it must reach `included`, in the block the chain says. */
async function includedAfter(g: Gate, signer: number, what: string): Promise<void> {
  const r = await rpc(g.port, 'eth_sendRawTransaction', [await signed(signer)], { key });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const hash = r.json.result as string;
  const s = await eventually(async () => {
    const s = await status(g, hash);
    return s.status === 'included' ? s : null;
  }, 10_000).catch(async () =>
    assert.fail(
      `${what}: a transaction accepted after it never reached included (watcher head ${g.app.trackers.get(4663)!.watcher.head}, chain ${await headOf()})`,
    ),
  );
  assert.ok(s !== null);
  const receipt = (await chainCall('eth_getTransactionReceipt', [hash])).result;
  assert.equal(s.block.hash, receipt.blockHash, what);
  assert.equal(s.source, 'edge');
  const w = g.app.trackers.get(DEV_CHAIN_ID)!.watcher;
  await eventually(async () => w.head === (await headOf()), 5_000).catch(() => assert.fail(`${what}: the watcher's head ${w.head} is not the chain's`));
  assert.equal(w.stalled, false, what);
}

for (const heads of ['polling', 'rpcWs'] as const) {
  describe(`the watcher follows the chain through reorgs (${heads})`, () => {
    let gate: Gate;
    before(async () => {
      const ws = heads === 'rpcWs' ? { rpcWs: chain.url.replace(/^http/, 'ws') } : {};
      gate = await startGate({
        chainB: false,
        sequencers: [chain.url],
        accounts,
        config: { allowUntipped: true },
        chainA: { rpc: chain.url, track: TRACK, ...ws },
      });
      await includedAfter(gate, 1, 'start');
    });
    after(() => gate.stop());
    const signer = heads === 'polling' ? 2 : 3;

    it('a reorg at the same height (1 block replaced)', async () => {
      assert.equal((await chainCall('anvil_reorg', [1, []])).error, undefined);
      await includedAfter(gate, signer, 'a reorg of depth 1');
    });

    it('a reorg of depth 3', async () => {
      await chainCall('anvil_mine', ['0x3']);
      assert.equal((await chainCall('anvil_reorg', [3, []])).error, undefined);
      await includedAfter(gate, signer, 'a reorg of depth 3');
    });

    it('a rollback (the head goes backwards)', async () => {
      await chainCall('anvil_mine', ['0x3']);
      assert.equal((await chainCall('anvil_rollback', [2])).error, undefined);
      await includedAfter(gate, signer, 'a rollback of 2');
    });

    it('100 blocks mined at once', async () => {
      assert.equal((await chainCall('anvil_mine', ['0x64'])).error, undefined);
      await includedAfter(gate, signer, '100 blocks at once');
    });

    it('a reorg at the same height of a block holding a tracked transaction, then new ones', async () => {
      const r = await rpc(gate.port, 'eth_sendRawTransaction', [await signed(signer)], { key });
      const hash = r.json.result as string;
      await eventually(async () => (await status(gate, hash)).status === 'included', 10_000);
      assert.equal((await chainCall('anvil_reorg', [2, []])).error, undefined);
      await chainCall('anvil_mine', ['0x1']);
      await eventually(async () => (await status(gate, hash)).status !== 'included', 10_000);
      await includedAfter(gate, signer, 'a reorg of depth 2 over a tracked transaction');
    });

    it('a reorg of depth 2 that takes a tracked transaction into its first new block', async () => {
      await chainCall('anvil_mine', ['0x1']); // the block under it holds nothing the reorg would lose
      const raw = await signed(signer);
      const hash = (await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key })).json.result as string;
      const first = await eventually(async () => {
        const s = await status(gate, hash);
        return s.status === 'included' ? s : null;
      }, 10_000);
      assert.equal((await chainCall('anvil_reorg', [2, [[raw, 0]]])).error, undefined);
      await chainCall('anvil_mine', ['0x1']);
      const again = await eventually(async () => {
        const s = await status(gate, hash);
        return s.status === 'included' && s.block.hash !== first!.block.hash ? s : null;
      }, 10_000);
      assert.equal(again!.reorgs, 1);
      await includedAfter(gate, signer, 'a reorg of depth 2 that re-includes a tracked transaction');
    });
  });
}

describe('the watcher far behind the chain', () => {
  let manual: Anvil;
  let proxy: Server;
  /** Blocks above this are answered `null` by the chain RPC in front of `manual` (-1: none held back). */
  let holdAbove = -1;
  before(async () => {
    manual = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID, extraArgs: ['--no-mining'] });
    // The chain RPC as the watcher sees it: anvil's answers, except blocks above `holdAbove`.
    proxy = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', async () => {
        const calls = JSON.parse(body) as { id: number; method: string; params: unknown[] }[] | { id: number; method: string; params: unknown[] };
        const answer: any = await (await fetch(manual.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json();
        const held = (c: { id: number; method: string; params: unknown[] }) =>
          holdAbove >= 0 && c.method === 'eth_getBlockByNumber' && Number(c.params[0]) > holdAbove;
        const out = Array.isArray(answer)
          ? answer.map((a: { id: number }) =>
              held((calls as { id: number; method: string; params: unknown[] }[]).find((c) => c.id === a.id)!) ? { ...a, result: null } : a,
            )
          : held(calls as { id: number; method: string; params: unknown[] })
            ? { ...answer, result: null }
            : answer;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(out));
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  });
  after(async () => {
    proxy.closeAllConnections();
    proxy.close();
    await manual.stop();
  });
  const manualCall = async (method: string, params: unknown[]) => (await rpc(Number(new URL(manual.url).port), method, params)).json;

  it('300 blocks at once, the transaction in the first: included (the blocks skipped are read where a lookup finds it)', async () => {
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const gate = await startGate({ chainB: false, sequencers: [manual.url], accounts, config: { allowUntipped: true }, chainA: { rpc: url, track: TRACK } });
    try {
      await manualCall('anvil_mine', ['0x2']);
      await eventually(() => gate.app.trackers.get(DEV_CHAIN_ID)!.watcher.head === 2, 5_000);
      holdAbove = 2; // the watcher sees the 300 blocks only once they are all there
      const raw = await signNext(manual.url, 4);
      const hash = (await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key })).json.result as string;
      assert.equal((await manualCall('anvil_mine', ['0x12c'])).error, undefined);
      holdAbove = -1;
      const s = await eventually(async () => {
        const s = await status(gate, hash);
        return s.status === 'included' ? s : null;
      }, 10_000);
      assert.equal(s!.block.number, 3);
    } finally {
      holdAbove = -1;
      await gate.stop();
    }
  });

  it('a head more than maxLagBlocks behind the chain is a stall: metric, /ready warning, restart; caught up once the blocks come', async () => {
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const gate = await startGate({
      chainB: false,
      sequencers: [manual.url],
      accounts,
      internal: true,
      config: { allowUntipped: true },
      chainA: { rpc: url, track: { ...TRACK, maxLagBlocks: 4 } },
    });
    try {
      const w = gate.app.trackers.get(DEV_CHAIN_ID)!.watcher;
      const head = Number((await manualCall('eth_blockNumber', [])).result);
      await eventually(() => w.head === head, 5_000);
      holdAbove = head;
      await manualCall('anvil_mine', ['0xa']);
      await eventually(() => w.stalled && w.restarts >= 1, 10_000);
      const metrics = (await send({ port: gate.internalPort!, method: 'GET', path: '/metrics' })).text;
      assert.match(metrics, /txgate_track_watcher_stalled\{chain="4663"\} 1/);
      const ready = await eventually(async () => {
        const r = await send({ port: gate.internalPort!, method: 'GET', path: '/ready' });
        return r.text.includes('lags the chain') ? r : null;
      }, 5_000);
      assert.equal(ready!.status, 200, 'a warning: submissions go on');
      holdAbove = -1;
      await eventually(() => !w.stalled && w.head === head + 10, 10_000);
    } finally {
      holdAbove = -1;
      await gate.stop();
    }
  });
});
