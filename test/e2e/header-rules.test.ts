/**
 * Header lines that must appear once (Host, X-Api-Key), and the WebSocket upgrade's own rules
 * (RFC 6455: version 13 only, 426 otherwise; no body on an upgrade), on the real uWS server over
 * raw TCP: a repeated header is refused 400 `duplicate_header` before anything is read, and the
 * connection closed, on POST /, GET /tip-addresses and the upgrade alike.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventually, newKey } from '../support/harness.js';
import { rawSession, statusLines } from '../support/http.js';
import { useGate } from '../support/gate-fixture.js';

const key = newKey();

const gate = useGate({ accounts: [{ id: 'acme', keys: [key] }], config: { websocket: { enabled: true } } });

const chainIdBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
const post = (headers: string, body = chainIdBody) =>
  `POST / HTTP/1.1\r\n${headers}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const upgrade = (extra: string) =>
  `GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nX-Api-Key: ${key}\r\n${extra}\r\n`;

/** One exchange: the single answer's status, headers and JSON body, and that the server closed. */
async function exchange(raw: string): Promise<{ status: number; head: string; body: any; closed: boolean }> {
  const r = await rawSession(gate.port, raw, 3000);
  const lines = statusLines(r.text);
  assert.equal(lines.length, 1, `exactly one answer:\n${r.text}`);
  const [head, body] = r.text.split('\r\n\r\n');
  return { status: Number(lines[0]!.split(' ')[1]), head: head!, body: body ? JSON.parse(body) : undefined, closed: r.serverClosed };
}

describe('a header that must appear once', () => {
  for (const [name, headers] of [
    ['two Host headers (the second another chain)', 'Host: localhost\r\nHost: fast.chain-b.example\r\n'],
    ['two equal Host headers', 'Host: localhost\r\nHost: localhost\r\n'],
    ['two X-Api-Key headers (the first valid)', `Host: localhost\r\nX-Api-Key: ${key}\r\nX-Api-Key: other\r\n`],
    ['two X-Api-Key headers (the second valid)', `Host: localhost\r\nX-Api-Key: other\r\nX-Api-Key: ${key}\r\n`],
  ] as const) {
    it(`POST /: ${name} is 400 duplicate_header, closed`, async () => {
      const from = gate.logs.length;
      const r = await exchange(post(headers));
      assert.equal(r.status, 400);
      assert.equal(r.body.error.data.reason, 'duplicate_header');
      assert.equal(r.body.id, null);
      assert.match(r.head, /\r\nConnection: close/i);
      assert.ok(r.closed);
      await eventually(() => gate.logs.slice(from).some((l) => l.includes('"duplicate_header"')));
    });
  }

  it('GET /tip-addresses with two X-Api-Key headers is 400 duplicate_header', async () => {
    const r = await exchange(`GET /tip-addresses HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${key}\r\nX-Api-Key: ${key}\r\n\r\n`);
    assert.equal(r.status, 400);
    assert.equal(r.body.error.data.reason, 'duplicate_header');
  });

  it('one of each is served (the rule counts lines, not names elsewhere)', async () => {
    const r = await exchange(post(`Host: localhost\r\nX-Api-Key: ${key}\r\nX-Host: a\r\nX-Api-Key-2: b\r\n`) + '');
    assert.equal(r.status, 200);
    assert.equal(r.body.result, '0x1237');
  });
});

describe('the WebSocket upgrade', () => {
  it('version 13 upgrades (101)', async () => {
    const r = await rawSession(gate.port, upgrade('Sec-WebSocket-Version: 13\r\n'), 300);
    assert.match(r.text, /^HTTP\/1\.1 101 /);
  });

  for (const v of ['8', '12', '14', '', '13, 8']) {
    it(`Sec-WebSocket-Version ${JSON.stringify(v)}: 426 naming 13, closed`, async () => {
      const r = await exchange(upgrade(v === '' ? '' : `Sec-WebSocket-Version: ${v}\r\n`));
      assert.equal(r.status, 426);
      assert.match(r.head, /\r\nsec-websocket-version: 13\r\n/i);
      assert.equal(r.body.error.data.reason, 'websocket_version');
      assert.ok(r.closed);
    });
  }

  it('an upgrade carrying a body is refused 400 bad_framing, never 101', async () => {
    const r = await exchange(upgrade('Sec-WebSocket-Version: 13\r\nContent-Length: 5\r\n') + 'hello');
    assert.equal(r.status, 400);
    assert.equal(r.body.error.data.reason, 'bad_framing');
    const c = await exchange(upgrade('Sec-WebSocket-Version: 13\r\nTransfer-Encoding: chunked\r\n') + '5\r\nhello\r\n0\r\n\r\n');
    assert.equal(c.status, 400);
  });

  it('an upgrade with two Host headers is 400 duplicate_header', async () => {
    const r = await exchange(upgrade('Sec-WebSocket-Version: 13\r\nHost: fast.chain-b.example\r\n'));
    assert.equal(r.status, 400);
    assert.equal(r.body.error.data.reason, 'duplicate_header');
  });
});
