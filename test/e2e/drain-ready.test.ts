/**
 * A drain as monitoring sees it (the real CLI, one thread and two): from SIGTERM until the process
 * exits, the internal listener's /ready answers 503 `draining` every time it is asked, while a
 * forward is held in flight and after it is answered; the public port refuses new connections
 * and answers /ready 503 `draining` on a connection it already had (with two threads, unless that
 * connection's thread had nothing in flight and has closed it); the forward still gets its hash,
 * and the process exits 0 (docs/operations.md#drain-step-by-step).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { initCrypto } from '../../src/base/native.js';
import { accountsDoc, eventually, newKey } from '../support/harness.js';
import { rpc, send, type Reply } from '../support/http.js';
import { startCli, writeCliConfig } from '../support/processes.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const key = newKey();

before(async () => {
  await initCrypto();
});

/** One poll of /ready: its status and notReady, or the connection error's code. */
async function poll(port: number, agent?: Agent): Promise<string> {
  try {
    const r: Reply = await send({ port, method: 'GET', path: '/ready', ...(agent !== undefined ? { agent } : {}) });
    return `${r.status} ${r.json?.status === 'ready' ? 'ready' : ((r.json?.notReady as string[] | undefined)?.join(',') ?? r.text)}`;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e);
  }
}

describe('/ready during a drain', () => {
  for (const workers of [1, 2]) {
    it(`${workers === 1 ? 'one thread' : 'two worker threads'}: the internal listener says draining until exit; the public port refuses new connections and says draining on an open one`, async () => {
      const stub = await new StubSequencer().start();
      let release = () => {};
      stub.hold = new Promise<void>((r) => (release = r));
      const dir = tempDir('txgate-drain-');
      writeFileSync(join(dir, 'accounts.json'), JSON.stringify(accountsDoc([{ id: 'mm', keys: [key] }])));
      const g = await startCli(
        writeCliConfig(dir, {
          workers,
          internal: { host: '127.0.0.1', port: 0 },
          shutdown: { graceMs: 30_000 },
          chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [stub.url], probe: { intervalMs: 200 } }],
        }),
      );
      const exited = new Promise<number | null>((r) => g.proc.once('exit', (c) => r(c)));
      // A balancer's health-check connection, kept alive from before the drain.
      const kept = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const internal = g.internalPort!;
        await eventually(async () => (await poll(internal)) === '200 ready', 10_000);
        assert.equal(await poll(g.port, kept), '200 ready');
        const raw = await sign1559({ nonce: 900 + workers });
        const inFlight = rpc(g.port, 'eth_sendRawTransaction', [raw], { key });
        inFlight.catch(() => {}); // awaited below; a failed assertion before then must not leave it unhandled
        await eventually(() => stub.sends().length === 1);
        g.proc.kill('SIGTERM');
        await eventually(() => g.out().includes('"msg":"draining"'));

        // The forward is held: the process cannot have exited. Every internal poll says draining.
        const held: string[] = [];
        for (let i = 0; i < 6; i++) {
          held.push(await poll(internal));
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.deepEqual(held, Array(6).fill('503 draining'), held.join(' | '));
        // The public port: a new connection is refused. The one already open hears draining while
        // its thread drains; with two threads it may be on the one with nothing in flight, which
        // has finished its drain and closed it. Never ready.
        assert.equal(await poll(g.port), 'ECONNREFUSED');
        const open = await poll(g.port, kept);
        if (workers === 1) assert.equal(open, '503 draining');
        else assert.ok(['503 draining', 'ECONNREFUSED', 'ECONNRESET'].includes(open), open);

        release();
        const r = await inFlight;
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.result, txHash(raw));
        // From the answer to the exit: still draining, or no longer listening; never ready.
        const tail: string[] = [];
        let done = false;
        void exited.then(() => (done = true));
        while (!done) tail.push(await poll(internal));
        assert.ok(
          tail.every((t) => t === '503 draining' || t === 'ECONNREFUSED' || t === 'ECONNRESET'),
          tail.join(' | '),
        );
        assert.equal(await exited, 0, g.out());
      } finally {
        kept.destroy();
        if (g.proc.exitCode === null) g.proc.kill('SIGKILL');
        release();
        await stub.stop();
      }
    });
  }
});
