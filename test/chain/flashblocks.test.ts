/**
 * Flashblocks against a real anvil (docs/flashblocks.md): the development builder
 * (src/dev/flashblocks.ts) seals a 2-s block on anvil and publishes a slice every 200 ms, text
 * and Brotli frames in turn; txgate with the default worker threads (the number of cores: the
 * tracker on worker 0, submissions on either), tracking, the WebSocket transport and the sync
 * send's `receipt` mode.
 *
 * - 20 of 20 tracked submissions are `preconfirmed` (a status call says so before the sealed
 *   block, with the block being built and the slice) then `included` in that very block; a lane
 *   subscriber is pushed pending, preconfirmed, included for each, in order; hostile frames sent
 *   on the stream meanwhile (not JSON, binary garbage, a slice of a payload never started, a
 *   receipt for a hash no slice carries) change nothing;
 * - a preconfirmed transaction the builder leaves out of its sealed block is pushed back to
 *   `pending`, counted (`txgate_preconfirmations_lost_total`), preconfirmed again in the next
 *   block and `included` there;
 * - the stream lost, then silent past `stallMs`: /ready warns (200), the metrics say so, and no
 *   outcome changes (a transaction sent meanwhile is `included` from the sealed block, never
 *   `preconfirmed`); the stream back, preconfirmations again;
 * - a sync call is answered at the preconfirmation (the block being built's number, a zero
 *   `blockHash`, the slice's status), the chain then includes it in that block; with the third
 *   param "sealed" it is answered with the sealed block's receipt; any other third param is 400.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { keccak256, type Hex } from 'viem';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { FlashblocksPublisher } from '../../src/dev/flashblocks.js';
import { freePort } from '../../src/base/free-port.js';
import { defaultWorkers } from '../../src/config/config-schema.js';
import { eventually, newKey } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { signNext } from '../support/txs.js';
import { useGate } from '../support/gate-fixture.js';
import { statusSubscription } from '../support/ws-client.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const key = newKey();
let anvil: Anvil;
let builder: FlashblocksPublisher;
const ZERO = '0x' + '0'.repeat(64);

const gate = useGate(async () => {
  anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID, extraArgs: ['--no-mining'] });
  builder = await new FlashblocksPublisher({ anvil: anvil.url }).start();
  return {
    chainB: false,
    sequencers: [builder.sequencerUrl],
    accounts: [{ id: 'desk', keys: [key], allowUntipped: true, grants: [{ sync: true }] }],
    internal: true,
    config: { allowUntipped: true, workers: defaultWorkers(), websocket: { enabled: true } },
    chainA: {
      rpc: anvil.url,
      rpcWs: anvil.url.replace('http://', 'ws://'),
      track: { enabled: true, pollMs: 100 },
      sync: { enabled: true, mode: 'receipt', maxWaitMs: 6000 },
      flashblocks: { enabled: true, url: builder.url, stallMs: 600 },
    },
  };
});
after(async () => {
  await builder?.stop();
  await anvil?.stop();
});

const status = async (hash: string) => (await rpc(gate.port, 'txgate_getTransactionStatus', [hash], { key })).json.result;
const metrics = async () => (await send({ port: gate.internalPort!, method: 'GET', path: '/metrics' })).text;

/** The status once it is no longer `pending` (asked every 10 ms). */
async function leftPending(hash: string): Promise<Record<string, any>> {
  return eventually(async () => {
    const s = await status(hash);
    return s.status === 'pending' ? null : s;
  }, 5_000);
}

describe('flashblocks: tracking and the sync send against the builder over anvil', () => {
  it('20 of 20: preconfirmed (status call and push) before the sealed block, then included in it; hostile frames change nothing', async () => {
    assert.ok(defaultWorkers() >= 2, 'these tests run with more than one worker thread');
    // The threads' streams are reading (the tracker's, and each thread's sync sender's): slices counted.
    await eventually(async () => {
      const m = await metrics();
      const n = (kind: string) => Number(new RegExp(`txgate_flashblocks_frames_total\\{chain="4663",kind="${kind}"\\} (\\d+)`).exec(m)?.[1] ?? 0);
      return n('read') + n('gap') >= 5 * defaultWorkers();
    }, 10_000);
    assert.equal(builder.subscribers, 1, 'one stream per chain and process: worker 0 reads it, the other threads follow');
    const { ws, pushed } = await statusSubscription(gate.port, key);
    const hashes: string[] = [];
    const seen: string[] = [];
    for (let i = 0; i < 20; i++) {
      if (i % 5 === 2) {
        builder.sendRaw('not json at all');
        builder.sendRaw(Buffer.from([0x01, 0xff, 0x00, 0x13]), true);
        builder.sendRaw(JSON.stringify({ payload_id: '0xdeadbeefdeadbeef', index: 3, diff: { transactions: [] }, metadata: {} }));
      }
      const r = await rpc(gate.port, 'eth_sendRawTransaction', [await signNext(anvil.url, 1 + (i % 4))], { key });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      const hash = r.json.result as string;
      hashes.push(hash);
      const s = await leftPending(hash);
      seen.push(
        s.status === 'preconfirmed' && typeof s.flashblock?.number === 'number' && s.flashblock.index >= 1 && s.block === null
          ? 'preconfirmed'
          : JSON.stringify(s),
      );
    }
    assert.deepEqual(seen, Array(20).fill('preconfirmed'));

    await eventually(() => hashes.every((h) => pushed().some((p) => p.hash === h && p.status === 'included')), 15_000).catch(() =>
      assert.fail(`included: ${hashes.filter((h) => pushed().some((p) => p.hash === h && p.status === 'included')).length} of 20`),
    );
    for (const h of hashes) {
      const mine = pushed().filter((p) => p.hash === h);
      assert.deepEqual(
        mine.map((p) => [p.status, p.version]),
        [
          ['pending', 1],
          ['preconfirmed', 2],
          ['included', 3],
        ],
        h,
      );
      assert.equal(mine[2]!.block.number, mine[1]!.flashblock.number, `${h}: included in the block it was preconfirmed for`);
      assert.ok(mine[1]!.flashblock.seenAt <= mine[2]!.block.seenAt);
      assert.equal(mine[1]!.flashblock.status, '0x1');
    }
    ws.close();
    const m = await metrics();
    assert.match(m, /txgate_flashblocks_frames_total\{chain="4663",kind="garbage"\} [1-9]/);
    assert.match(m, /txgate_flashblocks_frames_total\{chain="4663",kind="unknown_payload"\} [1-9]/);
    assert.match(m, /txgate_preconfirmation_seconds_count\{chain="4663"\} 20\b/);
    assert.match(m, /txgate_flashblocks_connected\{chain="4663"\} 1/);
  });

  it('left out of its sealed block: back to pending (pushed, counted), then preconfirmed again and included in a later block', async () => {
    const { ws, pushed } = await statusSubscription(gate.port, key);
    const raw = await signNext(anvil.url, 6);
    const hash = keccak256(raw as Hex);
    builder.leaveOut(hash);
    const r = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.result, hash);
    await eventually(() => pushed().some((p) => p.hash === hash && p.status === 'included'), 15_000);
    const mine = pushed().filter((p) => p.hash === hash);
    assert.deepEqual(
      mine.map((p) => [p.status, p.version]),
      [
        ['pending', 1],
        ['preconfirmed', 2],
        ['pending', 3],
        ['preconfirmed', 4],
        ['included', 5],
      ],
    );
    const [first, again, inBlock] = [mine[1]!.flashblock.number, mine[3]!.flashblock.number, mine[4]!.block.number];
    assert.ok(again > first, `preconfirmed again in a later block (${first} then ${again})`);
    assert.equal(inBlock, again);
    assert.equal(builder.leftOut, 1);
    await eventually(async () => /txgate_preconfirmations_lost_total\{chain="4663"\} 1\b/.test(await metrics()), 5_000);
    ws.close();
  });

  it('the stream lost, then silent: /ready warns, no outcome changes; back, preconfirmations again', async () => {
    const { ws, pushed } = await statusSubscription(gate.port, key);
    builder.paused = true;
    builder.disconnect();
    const ready = await eventually(async () => {
      const r = await send({ port: gate.internalPort!, method: 'GET', path: '/ready' });
      return /flashblocks stream/.test(r.text) ? r : null;
    }, 10_000);
    assert.equal(ready!.status, 200, 'a warning, not unready: submissions are unaffected');
    assert.match(await metrics(), /txgate_flashblocks_stalled\{chain="4663"\} 1/);
    const r = await rpc(gate.port, 'eth_sendRawTransaction', [await signNext(anvil.url, 4)], { key });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const hash = r.json.result as string;
    await eventually(() => pushed().some((p) => p.hash === hash && p.status === 'included'), 15_000);
    assert.deepEqual(
      pushed()
        .filter((p) => p.hash === hash)
        .map((p) => p.status),
      ['pending', 'included'],
      'from the sealed block alone',
    );
    builder.paused = false;
    await eventually(async () => /txgate_flashblocks_stalled\{chain="4663"\} 0/.test(await metrics()), 15_000);
    assert.match(await metrics(), /txgate_flashblocks_reconnects_total\{chain="4663"\} [1-9]/);
    const again = await rpc(gate.port, 'eth_sendRawTransaction', [await signNext(anvil.url, 4)], { key });
    assert.equal((await leftPending(again.json.result as string)).status, 'preconfirmed');
    ws.close();
  });

  it('a sync call answers at the preconfirmation (zero blockHash, the block being built), on whichever thread; "sealed" answers with the sealed block; another third param is 400', async () => {
    // Each call on a new connection: the kernel spreads them over the threads (worker 0 reads the stream, the others follow it).
    for (let i = 0; i < 6; i++) {
      const pre = await rpc(gate.port, 'eth_sendRawTransactionSync', [await signNext(anvil.url, 0)], { key });
      assert.equal(pre.status, 200, JSON.stringify(pre.json));
      const receipt = pre.json.result;
      assert.equal(receipt.blockHash, ZERO);
      assert.equal(receipt.status, '0x1');
      // Worker 0's tracker read the slice before any other thread was handed it.
      const s = await status(receipt.transactionHash);
      assert.ok(s.status === 'preconfirmed' || s.status === 'included', JSON.stringify(s));
      const included = await eventually(async () => {
        const t = await status(receipt.transactionHash);
        return t.status === 'included' ? t : null;
      }, 10_000);
      assert.equal(included.block.number, Number(receipt.blockNumber), 'included in the block the preconfirmation named');
    }

    const sealed = await rpc(gate.port, 'eth_sendRawTransactionSync', [await signNext(anvil.url, 5), null, 'sealed'], { key });
    assert.equal(sealed.status, 200, JSON.stringify(sealed.json));
    assert.notEqual(sealed.json.result.blockHash, ZERO);
    assert.match(sealed.json.result.blockHash, /^0x[0-9a-f]{64}$/);

    const bad = await rpc(gate.port, 'eth_sendRawTransactionSync', [await signNext(anvil.url, 5), null, 'soon'], { key });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.data.reason, 'invalid_params');
  });
});
