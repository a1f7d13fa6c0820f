/**
 * Sequencers over a persistent WebSocket (`ws://` sequencer URLs, src/upstreams/ws/ws-upstream.ts)
 * against a fault-injecting WebSocket stub (silent, reset after reading,
 * garbage frames, an answer for an unknown id, a duplicate answer). The outcome rules are the
 * HTTP forward's: the hash or a confirming lookup, resolved before any 502. Against anvil's
 * WebSocket endpoint: test/chain/ws-upstream-anvil.test.ts.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';
import { ignoredFrames } from '../../src/upstreams/peer-frames.js';
import { newKey, startGate, stubChain, type Gate } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { freePort } from '../../src/base/free-port.js';
import { txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';

keysNeverLogged();

const key = newKey();
const accounts = [{ id: 'mm', keys: [key], allowUntipped: true, grants: [{ rateLimit: { perSecond: 1e6, burst: 1e6 }, sync: true }] }];
const submit = (g: Gate, raw: string, method = 'eth_sendRawTransaction') => rpc(g.port, method, [raw], { key });

/** A WebSocket sequencer whose answers a test scripts; eth_chainId (the probe) answers chain 4663. */
class WsStub {
  readonly wss: WebSocketServer;
  readonly seen: Array<{ method: string; params: unknown[] }> = [];
  /** Answers one call: send frames on `ws` (or nothing). */
  onCall: (m: { id: number; method: string; params: unknown[] }, ws: WebSocket) => void = (m, ws) =>
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: txHash(String(m.params[0])) }));
  known = new Set<string>();
  connections = 0;
  constructor() {
    this.wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    this.wss.on('connection', (ws) => {
      this.connections++;
      ws.on('error', () => {});
      ws.on('message', (d) => {
        const m = JSON.parse(String(d)) as { id: number; method: string; params: unknown[] };
        this.seen.push({ method: m.method, params: m.params });
        if (m.method === 'eth_chainId') return ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: '0x1237' }));
        if (m.method === 'eth_getTransactionByHash') {
          const h = String(m.params[0]);
          return ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: this.known.has(h) ? { hash: h } : null }));
        }
        this.onCall(m, ws);
      });
    });
  }
  async ready(): Promise<this> {
    await new Promise((r) => this.wss.once('listening', r));
    return this;
  }
  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as { port: number }).port}`;
  }
  sends(raw: string): number {
    return this.seen.filter((c) => c.method === 'eth_sendRawTransaction' && c.params[0] === raw).length;
  }
  stop(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    return new Promise((r) => this.wss.close(() => r()));
  }
}

const open: { gates: Gate[]; stubs: WsStub[] } = { gates: [], stubs: [] };
afterEach(async () => {
  for (const g of open.gates.splice(0)) await g.stop();
  for (const s of open.stubs.splice(0)) await s.stop();
});
async function stubGate(forward: Record<string, unknown> = {}): Promise<{ gate: Gate; stub: WsStub }> {
  const stub = await new WsStub().ready();
  open.stubs.push(stub);
  const gate = await startGate({ accounts, config: { chains: [stubChain([stub.url], { timeoutMs: 300, ...forward })] } });
  open.gates.push(gate);
  return { gate, stub };
}
let nonce = 150_000;
const next = () => sign1559({ nonce: nonce++ });

describe('a ws:// sequencer, faults injected', () => {
  it('answers by id: the hash is an acceptance; garbage frames, an unknown id and a duplicate answer are ignored', async () => {
    const { gate, stub } = await stubGate();
    stub.onCall = (m, ws) => {
      ws.send('not json');
      ws.send(Buffer.from([1, 2, 3]));
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id + 100_000, result: '0x' + '00'.repeat(32) }));
      ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: {} }));
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: txHash(String(m.params[0])) }));
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32000, message: 'a duplicate, ignored' } }));
    };
    const ignored = ignoredFrames.sequencer;
    for (let i = 0; i < 3; i++) {
      const raw = await next();
      const r = await submit(gate, raw);
      assert.equal(r.json.result, txHash(raw), JSON.stringify(r.json));
    }
    // Each call's four frames that answered nothing are counted (txgate_peer_frames_ignored_total); the duplicate may still be on its way.
    assert.ok(ignoredFrames.sequencer - ignored >= 3 * 4, `ignored: ${ignoredFrames.sequencer - ignored}`);
    // A refusal by id is passed through as for HTTP.
    stub.onCall = (m, ws) => ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32000, message: 'txpool is full' } }));
    const r = await submit(gate, await next());
    assert.deepEqual(r.json.error, { code: -32000, message: 'txpool is full', data: { reason: 'upstream_rejected' } });
  });

  it('silent: written and never answered, the lookup silent too: 502 with the hash, never "not sent"', async () => {
    const { gate, stub } = await stubGate();
    stub.onCall = () => {};
    const raw = await next();
    const r = await submit(gate, raw);
    assert.equal(r.status, 502, JSON.stringify(r.json));
    assert.equal(r.json.error.data.txHash, txHash(raw));
    assert.ok(stub.sends(raw) >= 1);
  });

  it('the connection reset after reading a submission: the calls in flight on it are resolved on a new connection (200), never 503', async () => {
    const { gate, stub } = await stubGate({ timeoutMs: 1000 });
    const cut = new Set<string>();
    stub.onCall = (m, ws) => {
      const raw = String(m.params[0]);
      if (!cut.has(raw)) {
        cut.add(raw);
        // Read, kept, and the connection cut mid-call: the sequencer took it.
        stub.known.add(txHash(raw));
        ws.terminate();
        return;
      }
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32000, message: 'already known' } }));
    };
    const raws = await Promise.all(Array.from({ length: 8 }, () => next()));
    const rs = await Promise.all(raws.map((raw) => submit(gate, raw)));
    for (const [i, r] of rs.entries()) assert.equal(r.json.result, txHash(raws[i]!), JSON.stringify(r.json));
    assert.ok(stub.connections >= 2, 'reconnected');
    const rules = gate.logs
      .map((l) => JSON.parse(l))
      .filter((l) => l.audit === 'forward')
      .map((l) => l.rule);
    assert.ok(
      rules.every((r) => r === 'lookup' || r === 'resend' || r === 'hash'),
      JSON.stringify(rules),
    );
  });

  it('the sequencer unreachable: 503 upstream_unavailable, nothing sent', async () => {
    const gate = await startGate({ accounts, config: { chains: [stubChain([`ws://127.0.0.1:${await freePort()}`], { timeoutMs: 300, queueMs: 200 })] } });
    open.gates.push(gate);
    const r = await submit(gate, await next());
    assert.equal(r.status, 503, JSON.stringify(r.json));
    assert.match(r.json.error.data.reason, /upstream_unavailable|overloaded/);
  });
});
