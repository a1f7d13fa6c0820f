/**
 * A resend after `dropped` is a new life of the same hash (docs/tracking.md#the-states), against
 * a real anvil that mines only when told: a transaction dropped from the pool
 * (`anvil_dropTransaction`) is sent again at once, within the duplicate window
 * (`dedup.acceptedTtlMs`, 5 s; `dropAfterMs` 300 ms is below it), and again once the window is
 * over: both resends reach the sequencer (anvil knows the hash again), the chain includes it, and
 * its status goes pending → dropped → pending → dropped → pending → included, each change pushed
 * to a lane subscription of the account in order, each push equal to the status answered then.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Hex } from 'viem';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { eventually, newKey } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { rpc } from '../support/http.js';
import { signNext } from '../support/txs.js';
import { useGate } from '../support/gate-fixture.js';
import { statusSubscription } from '../support/ws-client.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const key = newKey();
let anvil: Anvil;

const gate = useGate(async () => {
  anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID, extraArgs: ['--no-mining'] });
  return {
    chainB: false,
    sequencers: [anvil.url],
    accounts: [{ id: 'desk', keys: [key], allowUntipped: true }],
    config: { allowUntipped: true, websocket: { enabled: true } },
    chainA: { rpc: anvil.url, track: { enabled: true, dropAfterBlocks: 1, dropAfterMs: 300, pollMs: 100 } },
  };
});
after(() => anvil.stop());

const chainCall = async (method: string, params: unknown[]) => (await rpc(Number(new URL(anvil.url).port), method, params)).json;
const status = async (hash: string) => (await rpc(gate.port, 'txgate_getTransactionStatus', [hash], { key })).json.result as Record<string, any>;
const until = (hash: string, want: string) => eventually(async () => ((await status(hash)).status === want ? true : null), 10_000);

async function submit(raw: Hex): Promise<string> {
  const r = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.result as string;
}

/** Dropped from anvil's pool, blocks mined past `dropAfterBlocks`: the tracker finds it dropped. */
async function drop(hash: string): Promise<void> {
  assert.equal((await chainCall('anvil_dropTransaction', [hash])).error, undefined);
  assert.equal((await chainCall('eth_getTransactionByHash', [hash])).result, null);
  await chainCall('anvil_mine', ['0x2']);
  await until(hash, 'dropped');
}

describe('a resend after dropped', () => {
  it('within the duplicate window and after it: forwarded both times, followed again, included; every change pushed in order', async () => {
    const { ws, pushed } = await statusSubscription(gate.port, key);

    const raw = await signNext(anvil.url, 6);
    const hash = await submit(raw);
    const first = Date.now();
    await drop(hash);

    // At once: within the duplicate window of the first acceptance, yet forwarded (anvil has it again).
    assert.equal(await submit(raw), hash);
    assert.ok(Date.now() - first < 5_000, 'the first resend was within the duplicate window');
    assert.notEqual((await chainCall('eth_getTransactionByHash', [hash])).result, null, 'the resend reached the sequencer');
    assert.equal((await status(hash)).status, 'pending');
    await drop(hash);

    // Later: past the window.
    await new Promise((r) => setTimeout(r, 5_200));
    assert.equal(await submit(raw), hash);
    assert.notEqual((await chainCall('eth_getTransactionByHash', [hash])).result, null, 'the second resend reached the sequencer');
    await chainCall('anvil_mine', ['0x1']);
    await until(hash, 'included');

    const mine = await eventually(() => (pushed().length >= 6 ? pushed() : null), 5_000);
    assert.deepEqual(
      mine!.map((s) => [s.status, s.version]),
      [
        ['pending', 1],
        ['dropped', 2],
        ['pending', 3],
        ['dropped', 4],
        ['pending', 5],
        ['included', 6],
      ],
    );
    assert.deepEqual(mine!.at(-1), await status(hash), 'the last push is the status answered');
    const receipt = (await chainCall('eth_getTransactionReceipt', [hash])).result;
    assert.equal(mine!.at(-1)!.block.hash, receipt.blockHash);
    ws.close();
  });
});
