/**
 * An HTTP upstream in front of a sequencer at its connection limit (src/upstreams/http/http-connections.ts): the
 * sequencer serves its first connection and closes every other one unread, at accept or once
 * the request's bytes arrived. A connection that has answered is used first; asking again about
 * written bytes (`proven`) waits for one rather than open a fresh one; and through txgate, every
 * submission is answered with the sequencer's acceptance, none 502 or 503 for bytes it never
 * read. Against a real node:http server on loopback; no timings asserted.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HttpUpstream } from '../../src/upstreams/http/http-upstream.js';
import type { Answer } from '../../src/upstreams/upstream.js';
import { newKey, startGate, stubChain } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';

keysNeverLogged();

/** A JSON-RPC server that serves `capacity` connections and closes the others as `mode` says. */
function limitedServer(capacity: number, mode: 'accept' | 'data') {
  let open = 0;
  const stats = { served: 0, closedUnread: 0, read: new Set<string>() };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      stats.served++;
      const m = JSON.parse(body) as { id: number; method: string; params: string[] };
      let result: unknown = '0x1237';
      if (m.method === 'eth_sendRawTransaction') stats.read.add((result = txHash(m.params[0]!)) as string);
      else if (m.method === 'eth_getTransactionByHash') result = stats.read.has(m.params[0]!) ? { hash: m.params[0] } : null;
      // A little later, so that calls overlap and the one served connection is busy.
      setTimeout(() => res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result })), 5);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s: Socket) => {
    if (open >= capacity) {
      stats.closedUnread++;
      if (mode === 'accept') return void s.resetAndDestroy();
      s.pause();
      s.once('readable', () => s.resetAndDestroy());
      return;
    }
    open++;
    s.on('close', () => open--);
  });
  return { server, stats };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const TIMES = { timeoutMs: 500, queueMs: 2000 };
const call = (u: HttpUpstream, proven?: boolean) => u.call('eth_chainId', '[]', proven === true ? { ...TIMES, proven } : TIMES);
const answered = (a: Answer) => a.kind === 'result' && a.result === '0x1237';

describe('an HTTP upstream at a sequencer that serves one connection and closes the rest unread', () => {
  const atData = limitedServer(1, 'data');
  let dataUrl: string;
  before(async () => {
    dataUrl = await listen(atData.server);
  });
  after(() => {
    atData.server.close();
  });

  it('asking again (proven) goes over the connection that answered, never a fresh one closed unread, while others are lost', async () => {
    const u = new HttpUpstream(dataUrl, 4);
    try {
      assert.ok(answered(await call(u)), 'the first connection is served');
      let lost = 0;
      for (let round = 0; round < 6; round++) {
        // Plain calls beside it open fresh connections, which the sequencer closes unread.
        const plain = [call(u), call(u), call(u)];
        const again = await call(u, true);
        assert.ok(answered(again), `round ${round}: a proven call was answered (${JSON.stringify(again)})`);
        for (const a of await Promise.all(plain)) if (!answered(a)) lost++;
      }
      assert.ok(atData.stats.closedUnread > 0, 'fresh connections were opened and closed unread');
      // Calls written to a fresh connection were lost (the outcome rules resolve them); proven ones never.
      assert.ok(lost > 0, 'some plain calls were written to fresh connections and lost');
    } finally {
      await u.close(true);
    }
  });

  it('with no connection that has answered, a proven call opens a fresh one (nothing to wait for)', async () => {
    const { server } = limitedServer(1, 'data');
    const u = new HttpUpstream(await listen(server), 2);
    try {
      assert.ok(answered(await call(u, true)));
    } finally {
      await u.close(true);
      server.close();
    }
  });
});

describe('through txgate: a sequencer at its connection limit gets every submission asked on a connection it serves', () => {
  const key = newKey();
  for (const mode of ['accept', 'data'] as const) {
    it(`closed ${mode === 'accept' ? 'at accept' : 'once the bytes arrived, unread'}: 60 concurrent submissions, each 200 with its hash and read by the sequencer`, async () => {
      const seq = limitedServer(4, mode);
      const url = await listen(seq.server);
      const gate = await startGate({
        accounts: [{ id: 'mm', keys: [key], grants: [{ rateLimit: { perSecond: 1e6, burst: 1e6 } }] }],
        config: { chains: [stubChain([url], { connections: 32, timeoutMs: 2000 })] },
      });
      try {
        for (let round = 0; round < 2; round++) {
          const raws = await Promise.all(Array.from({ length: 60 }, (_, i) => sign1559({ nonce: 1000 * (mode === 'accept' ? 1 : 2) + 100 * round + i })));
          const answers = await Promise.all(raws.map((raw) => rpc(gate.port, 'eth_sendRawTransaction', [raw], { key })));
          answers.forEach((a, i) => {
            const h = txHash(raws[i]!);
            assert.equal(a.status, 200, `round ${round}, tx ${i}: ${a.text}`);
            assert.equal(a.json.result, h);
            assert.ok(seq.stats.read.has(h));
          });
        }
        assert.ok(seq.stats.closedUnread > 0, 'connections beyond the limit were closed unread');
      } finally {
        await gate.stop();
        seq.server.close();
      }
    });
  }
});
