/**
 * What a request can make txgate hold before it is authenticated, and in all: a request without
 * a key that declares more than 512 bytes is refused 413 at its head, unread; a chunked one
 * is read up to 512 bytes; and bodies being read share one process-wide budget
 * (`limits.maxBufferedBodyBytes`), beyond which a new body is refused 503 `overloaded`, unread,
 * keyed or not. Over raw TCP on the real server; no timings asserted.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { BodyBudget } from '../../src/http/body-budget.js';
import { eventually, newKey } from '../support/harness.js';
import { rawSession, statusLines } from '../support/http.js';
import { keysNeverLogged, useGate } from '../support/gate-fixture.js';

keysNeverLogged();

describe('BodyBudget', () => {
  it('reserves up to its bound, refuses beyond without reserving, and gives back', () => {
    const b = new BodyBudget(BodyBudget.allocate(), 100);
    assert.ok(b.take(60));
    assert.ok(!b.take(41));
    assert.equal(b.bytes, 60);
    assert.ok(b.take(40));
    b.give(60);
    assert.equal(b.bytes, 40);
    const other = new BodyBudget(b.buffer, 100); // another thread's view of the same buffer
    assert.ok(!other.take(61));
    assert.ok(other.take(60));
    assert.equal(b.bytes, 100);
  });
});

describe('the pre-authentication bound and the body budget, end to end', () => {
  const key = newKey();
  const BUDGET = 65536;
  const gate = useGate({ accounts: [{ id: 'acme', keys: [key] }], config: { limits: { maxBufferedBodyBytes: BUDGET } } });

  const head = (cl: number, withKey: boolean) =>
    `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${withKey ? `X-Api-Key: ${key}\r\n` : ''}Content-Length: ${cl}\r\n\r\n`;

  /** Opens a connection and writes `text`, keeping it open; collects what comes back. */
  const hold = (text: string) =>
    new Promise<{ s: Socket; got: () => string; closed: () => boolean }>((resolve) => {
      let got = '';
      let closed = false;
      const s = connect(gate.port, '127.0.0.1', () => {
        s.write(text);
        resolve({ s, got: () => got, closed: () => closed });
      });
      s.on('data', (d) => (got += d.toString()));
      s.on('close', () => (closed = true));
      s.on('error', () => {});
    });

  it('no key, 64 KiB declared: 413 at the head, nothing read, closed', async () => {
    const r = await rawSession(gate.port, head(65536, false) + 'x'.repeat(1000), 3000);
    assert.equal(statusLines(r.text).length, 1);
    assert.match(r.text, /^HTTP\/1\.1 413 /);
    assert.match(r.text, /"reason":"payload_too_large"/);
    assert.ok(r.serverClosed);
  });

  it('no key, chunked: read up to 512 bytes, then 413', async () => {
    const chunk = 'a'.repeat(600);
    const r = await rawSession(
      gate.port,
      `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`,
      3000,
    );
    assert.match(r.text, /^HTTP\/1\.1 413 /);
  });

  it('bodies being read beyond the budget: a new one is 503 overloaded unread (keyed too); served again once the budget frees', async () => {
    // Two keyed bodies of 30,000 declared bytes, each held half-sent: 60,000 of 65,536 reserved.
    const a = await hold(head(30_000, true) + 'x'.repeat(1000));
    const b = await hold(head(30_000, true) + 'x'.repeat(1000));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(a.got(), '');
    assert.equal(b.got(), '');
    // A third (keyed, 10,000 declared) does not fit: refused before its body is read.
    const c = await rawSession(gate.port, head(10_000, true) + 'y'.repeat(10_000), 3000);
    assert.equal(statusLines(c.text).length, 1);
    assert.match(c.text, /^HTTP\/1\.1 503 /);
    assert.match(c.text, /"reason":"overloaded"/);
    assert.ok(c.serverClosed);
    // A small body still fits in what is left.
    const small = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] });
    const d = await rawSession(gate.port, head(small.length, false) + small, 500);
    assert.match(d.text, /^HTTP\/1\.1 200 /);
    // The held clients leave: their reservations come back, and the large body is served again.
    a.s.destroy();
    b.s.destroy();
    await eventually(async () => {
      const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [], p: 'z'.repeat(10_000) });
      const e = await rawSession(gate.port, head(big.length, true) + big, 1000);
      return /^HTTP\/1\.1 413 /.test(e.text); // read whole, then refused by the eth_chainId cap: not overloaded
    });
  });
});
