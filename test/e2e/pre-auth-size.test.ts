/**
 * The body cap before authentication, answered by what the request is (docs/design.md §3.5):
 * an `eth_chainId` of at most 512 bytes is served whatever the key; over 512 bytes, no key at all
 * (or an empty one) is 413 `payload_too_large` saying only a small `eth_chainId` is served without
 * a valid key, a key that does not authenticate is 401, and a valid key reaches the route stage's
 * 413. The declared and the chunked form of the same request get the same answer. Over real HTTP.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newKey } from '../support/harness.js';
import { rawSession, send } from '../support/http.js';
import { keysNeverLogged, useGate } from '../support/gate-fixture.js';

keysNeverLogged();

describe('the pre-authentication cap at 512 and 513 bytes, declared and chunked', () => {
  const key = newKey();
  const wrongKey = newKey();
  const gate = useGate({ accounts: [{ id: 'acme', keys: [key] }] });

  const base = { jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] };
  const pad = (n: number) => {
    const s = JSON.stringify({ ...base, pad: '' });
    return JSON.stringify({ ...base, pad: 'x'.repeat(n - s.length) });
  };
  const keys: [string, Record<string, string>][] = [
    ['no key', {}],
    ['an empty key', { 'x-api-key': '' }],
    ['a wrong key', { 'x-api-key': wrongKey }],
    ['a valid key', { 'x-api-key': key }],
  ];
  const forms: [string, number | undefined][] = [
    ['declared', undefined],
    ['chunked', 100],
  ];

  for (const [form, chunked] of forms) {
    for (const [who, headers] of keys) {
      it(`${form}, ${who}: an eth_chainId of 512 bytes is served`, async () => {
        const body = pad(512);
        assert.equal(Buffer.byteLength(body), 512);
        const r = await send({
          port: gate.port,
          headers: { 'content-type': 'application/json', ...headers },
          body,
          ...(chunked === undefined ? {} : { chunked }),
        });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.result, '0x' + gate.config.chains[0]!.chainId.toString(16));
      });
    }
    it(`${form}, no key: 513 bytes is 413, saying only a small eth_chainId is served without a key`, async () => {
      for (const headers of [{}, { 'x-api-key': '' }]) {
        const r = await send({
          port: gate.port,
          headers: { 'content-type': 'application/json', ...headers },
          body: pad(513),
          ...(chunked === undefined ? {} : { chunked }),
        });
        assert.equal(r.status, 413, r.text);
        assert.equal(r.json.error.data.reason, 'payload_too_large');
        assert.equal(r.json.error.code, -32600);
        assert.match(r.json.error.message, /Without a valid X-Api-Key only eth_chainId with a body of at most 512 bytes is served/);
      }
    });
    it(`${form}, a wrong key: 513 bytes is 401`, async () => {
      const r = await send({
        port: gate.port,
        headers: { 'content-type': 'application/json', 'x-api-key': wrongKey },
        body: pad(513),
        ...(chunked === undefined ? {} : { chunked }),
      });
      assert.equal(r.status, 401, r.text);
      assert.equal(r.json.error.data.reason, 'unauthorized');
    });
    it(`${form}, a valid key: a 513-byte eth_chainId is the route stage's 413 (the eth_chainId cap), answered with its id`, async () => {
      const r = await send({
        port: gate.port,
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: pad(513),
        ...(chunked === undefined ? {} : { chunked }),
      });
      assert.equal(r.status, 413, r.text);
      assert.equal(r.json.error.data.reason, 'payload_too_large');
      assert.equal(r.json.id, 7);
      assert.doesNotMatch(r.json.error.message, /Without a valid X-Api-Key/);
    });
  }

  it('no key, 64 KiB declared: 413 at the head, unread, the connection closed', async () => {
    const r = await rawSession(
      gate.port,
      `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 65536\r\n\r\n${'x'.repeat(1000)}`,
      3000,
    );
    assert.match(r.text, /^HTTP\/1\.1 413 /);
    assert.match(r.text, /Without a valid X-Api-Key/);
    assert.ok(r.serverClosed);
  });
  it('a wrong key, 64 KiB declared: 401 at the head, unread, the connection closed', async () => {
    const r = await rawSession(
      gate.port,
      `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-Api-Key: ${wrongKey}\r\nContent-Length: 65536\r\n\r\n${'x'.repeat(1000)}`,
      3000,
    );
    assert.match(r.text, /^HTTP\/1\.1 401 /);
    assert.match(r.text, /"reason":"unauthorized"/);
    assert.ok(r.serverClosed);
  });
});
