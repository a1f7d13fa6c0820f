/**
 * Keep-warm (src/upstreams/keep-warm.ts) against sequencers that close idle connections after
 * 5 s, 10 s and 60 s, over HTTP and WebSocket at once: submissions before and after a silence
 * longer than the sequencer's idle close, then submissions sent at moments a probe falls due
 * (gaps around `idleMs`), so that probes and submissions cross. Whatever the timing: every
 * submission is answered with its hash, the sequencer received each exactly once, and the probes
 * are counted (the sequencer saw them as `eth_chainId` beyond the health prober's one; the
 * process's counter rose). The three cases run at once, one real idle close each.
 *
 * The sequencer is node:http with its `keepAliveTimeout` set to the idle close (what a Node-based
 * node or proxy does: node's http.Server closes a kept-alive connection idle that long and says so
 * in `Keep-Alive: timeout=N`, which undici then honours 2 s early), with a `ws` WebSocket server on
 * the same port that closes a connection which carried no message for as long (pings do not count).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { WebSocketServer } from 'ws';
import { keepWarmProbes } from '../../src/upstreams/keep-warm.js';
import { type Gate, newKey, startGate } from '../support/harness.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { rpc } from '../support/http.js';
import { txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the sequencer received, by transport. */
class IdleClosingSequencer {
  readonly sends = new Map<string, number>();
  readonly chainIds = { http: 0, ws: 0 };
  private readonly server: Server;
  private readonly wss: WebSocketServer;
  port = 0;

  constructor(readonly idleMs: number) {
    const answer = (text: string, via: 'http' | 'ws'): string => {
      const m = JSON.parse(text) as { id: unknown; method: string; params: string[] };
      if (m.method === 'eth_chainId') {
        this.chainIds[via]++;
        return JSON.stringify({ jsonrpc: '2.0', id: m.id, result: via === 'http' ? '0x1237' : '0xa' });
      }
      const hash = txHash(m.params[0]!);
      this.sends.set(hash, (this.sends.get(hash) ?? 0) + 1);
      return JSON.stringify({ jsonrpc: '2.0', id: m.id, result: hash });
    };
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer(body, 'http')));
    });
    this.server.keepAliveTimeout = idleMs;
    this.wss = new WebSocketServer({ server: this.server });
    this.wss.on('connection', (ws) => {
      let timer = setTimeout(() => ws.close(1001), idleMs);
      ws.on('error', () => {});
      ws.on('close', () => clearTimeout(timer));
      ws.on('message', (d) => {
        clearTimeout(timer);
        timer = setTimeout(() => ws.close(1001), idleMs);
        ws.send(answer(String(d), 'ws'));
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

const CASES = [
  { closeMs: 5_000, idleMs: 1_000 },
  { closeMs: 10_000, idleMs: 2_000 },
  { closeMs: 60_000, idleMs: 2_000 },
];
keysNeverLogged();
const running: { seq: IdleClosingSequencer; gate: Gate }[] = [];
after(async () => {
  for (const r of running) await Promise.all([r.gate.stop(), r.seq.stop()]);
});
const probesBefore = keepWarmProbes.answered;

describe('keep-warm against sequencers that close idle connections', { concurrency: true }, () => {
  for (const { closeMs, idleMs } of CASES)
    it(`closed after ${closeMs / 1000} s idle, probed after ${idleMs / 1000} s: every answer its hash, every submission received once, probes counted`, async () => {
      const seq = await new IdleClosingSequencer(closeMs).start();
      const key = newKey();
      const gate = await startGate({
        accounts: [{ id: 'desk', keys: [key], grants: [{ chainId: 4663 }, { chainId: 10 }] }],
        config: {
          chains: [
            {
              chainId: 4663,
              hosts: ['localhost'],
              sequencers: [`http://127.0.0.1:${seq.port}`],
              probe: { intervalMs: 600_000, timeoutMs: 1000 },
              forward: { keepWarm: { idleMs } },
            },
            {
              chainId: 10,
              hosts: ['fast.chain-b.example'],
              sequencers: [`ws://127.0.0.1:${seq.port}`],
              probe: { intervalMs: 600_000, timeoutMs: 1000 },
              forward: { keepWarm: { idleMs } },
            },
          ],
          log: { level: 'warn' },
        },
      });
      running.push({ seq, gate });
      let nonce = 0;
      const sent: string[] = [];
      const submit = async (chainId: number) => {
        const raw = await sign1559({ chainId, nonce: nonce++, signer: chainId === 10 ? 1 : 0 });
        sent.push(txHash(raw));
        const r = await rpc(gate.port, 'eth_sendRawTransaction', [raw], { key, host: chainId === 10 ? 'fast.chain-b.example' : 'localhost' });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.result, txHash(raw), 'the answer is the hash of the bytes sent');
      };
      /** Three submissions at once on each chain: more than one connection in use. */
      const burst = () => Promise.all([4663, 10].flatMap((c) => [submit(c), submit(c), submit(c)]));

      await burst();
      await sleep(closeMs + 1_000); // longer than the sequencer keeps an idle connection
      await burst();
      // Submissions at the moments probes fall due: gaps from 0.8 to 1.7 times idleMs.
      for (let k = 0; k < 5; k++) {
        await sleep(idleMs * (0.8 + (k % 4) * 0.3));
        await Promise.all([submit(4663), submit(10)]);
      }

      assert.equal(sent.length, 22);
      for (const hash of sent) assert.equal(seq.sends.get(hash), 1, `${hash}: received once`);
      assert.equal(
        [...seq.sends.values()].reduce((a, b) => a + b, 0),
        sent.length,
        'nothing else was sent as a submission',
      );
      // The health prober asks once per chain (its interval is 10 minutes): the rest are keep-warm's.
      assert.ok(seq.chainIds.http >= 3, `HTTP eth_chainId ${seq.chainIds.http}`);
      assert.ok(seq.chainIds.ws >= 3, `ws eth_chainId ${seq.chainIds.ws}`);
    });
  it('the probes are counted (txgate_sequencer_keepalive_probes_total{result="answered"})', async () => {
    // Runs beside the cases: waits until the first has probed.
    for (let k = 0; k < 200 && keepWarmProbes.answered - probesBefore < 4; k++) await sleep(50);
    assert.ok(keepWarmProbes.answered - probesBefore >= 4, `answered ${keepWarmProbes.answered - probesBefore}`);
  });
});
