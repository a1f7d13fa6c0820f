/**
 * The WebSocket transport's connections over time: a key revoked while its connection is open, the
 * server's pings on an idle connection, drain, and its metrics (a stub sequencer behind it). The
 * upgrade and frames: ws-transport.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import WebSocket from 'ws';
import { accountsDoc, eventually, newKey, startGate } from '../support/harness.js';
import { send } from '../support/http.js';
import { txHash } from '../support/stub-sequencer.js';
import { useGate } from '../support/gate-fixture.js';
import { connected, open } from '../support/ws-client.js';
import { WS, wsTransportParts } from '../support/ws-gate.js';

const ws = wsTransportParts();
const gate = useGate(ws.gateOptions);
const { tx, accounts: ACCOUNTS } = ws;
const { key } = ws.keys;

describe('the WebSocket transport: keys, pings, drain', () => {
  it('a key revoked while its connection is open: frames refused at once (401), the connection closed with 4001 after answering what is in flight', async () => {
    const k = newKey();
    const g = await startGate({ sequencers: [ws.stub.url], accounts: [...ACCOUNTS, { id: 'rev', keys: [k], allowUntipped: true }], config: { websocket: WS } });
    const c = await connected(g.port, k);
    ws.stub.delayMs = 400;
    try {
      const raw = await tx();
      const inFlight = c.call('eth_sendRawTransaction', [raw]);
      await eventually(() => ws.stub.sends().some((s) => s.params[0] === raw));
      g.writeAccounts(accountsDoc(ACCOUNTS));
      await g.app.store.reload?.('test');
      // Still open while its first request is in flight: a new frame is refused by the key check.
      const refused = await c.call('eth_sendRawTransaction', [await tx()]);
      assert.deepEqual([refused.error?.data.reason, refused.error?.data.status], ['unauthorized', 401]);
      const closed = await c.closed;
      assert.equal((await inFlight).result, txHash(raw), 'answered before the close');
      assert.equal(closed.code, 4001);
      const again = await open(g.port, k);
      assert.equal((again as { status: number }).status, 401);
    } finally {
      ws.stub.delayMs = 0;
      await g.stop();
    }
  });

  it('an idle connection outlives the idle timeout: the server pings, the client answers, and it still submits', async () => {
    const g = await startGate({ sequencers: [ws.stub.url], accounts: ACCOUNTS, config: { websocket: { ...WS, idleTimeoutSeconds: 8 } } });
    const c = await connected(g.port, key);
    let pings = 0;
    c.ws.on('ping', () => pings++);
    try {
      await new Promise((r) => setTimeout(r, 13_000));
      assert.ok(pings >= 1, 'the server pinged');
      assert.equal(c.ws.readyState, WebSocket.OPEN);
      const raw = await tx();
      assert.equal((await c.call('eth_sendRawTransaction', [raw])).result, txHash(raw));
    } finally {
      c.ws.close();
      await g.stop();
    }
  });

  it('drain: in-flight requests answered, new frames answered draining (nothing sent), then close 1001; no new upgrades', async () => {
    const g = await startGate({ sequencers: [ws.stub.url], accounts: ACCOUNTS, config: { websocket: WS } });
    const c = await connected(g.port, key);
    ws.stub.delayMs = 500;
    try {
      const raw = await tx();
      const inFlight = c.call('eth_sendRawTransaction', [raw]);
      await eventually(() => ws.stub.sends().some((s) => s.params[0] === raw));
      const stopping = g.stop();
      await eventually(() => g.app.readiness.draining);
      const late = await c.call('eth_sendRawTransaction', [await tx()]);
      assert.deepEqual([late.error?.data.reason, late.error?.data.status], ['draining', 503]);
      const upgrade = await open(g.port, key).then(
        (o) => o.kind,
        () => 'no connection',
      );
      assert.notEqual(upgrade, 'open', 'no new upgrades while draining');
      assert.equal((await inFlight).result, txHash(raw));
      assert.equal((await c.closed).code, 1001);
      await stopping;
    } finally {
      ws.stub.delayMs = 0;
    }
  });

  it('metrics: open connections, frames by transport, close codes', async () => {
    const scrape = async () => (await fetch(`http://127.0.0.1:${gate.internalPort}/metrics`)).text();
    const c = await connected(gate.port, key);
    await c.call('eth_chainId');
    const open = await scrape();
    assert.match(open, /^txgate_ws_connections [1-9]/m);
    assert.match(open, /^txgate_requests_total\{method="eth_chainId",status="200",reason="ok",transport="ws"\} [1-9]/m);
    c.ws.close(1000);
    await c.closed;
    await eventually(async () => /^txgate_ws_closes_total\{code="1000"\} [1-9]/m.test(await scrape()));
  });

  it("per-stage metrics: the WebSocket transport's requests are sampled into the stage series by the pipeline, as HTTP's are (1 in 64)", async () => {
    const g = await startGate({ sequencers: [ws.stub.url], accounts: ACCOUNTS, config: { websocket: WS }, internal: true });
    const c = await connected(g.port, key);
    try {
      const count = async (stage: string) => {
        const text = (await send({ port: g.internalPort!, method: 'GET', path: '/metrics' })).text;
        return Number(new RegExp(`^txgate_stage_duration_seconds_count\\{stage="${stage}"\\} (\\d+)`, 'm').exec(text)?.[1]);
      };
      assert.equal(await count('host'), 0, 'the series exist before a sample');
      // No request over HTTP on this gate: only the WebSocket transport's 64 frames.
      for (let i = 0; i < 64; i++) assert.equal((await c.call('eth_chainId')).result, '0x1237');
      assert.deepEqual([await count('host'), await count('parse'), await count('route'), await count('auth')], [1, 1, 1, 0]);
    } finally {
      c.ws.close();
      await g.stop();
    }
  });
});
