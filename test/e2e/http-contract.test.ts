/**
 * The public contract over real HTTP on the real uWS server: exact status and body for every
 * front-end and parse/route reason, size caps (Content-Length and chunked), 421 before the body
 * is read, 404/405, HEAD. Pipelining, /health and /ready, ambiguous framing, clients that leave
 * and the rejection log: http-connections.test.ts.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { REASONS } from '../../src/base/reasons.js';
import { newKey } from '../support/harness.js';
import { rawExchange, rpc, send } from '../support/http.js';
import { StubSequencer } from '../support/stub-sequencer.js';
import { useGate } from '../support/gate-fixture.js';

let stub: StubSequencer;
const key = newKey();

function errorBody(reason: keyof typeof REASONS, id: unknown = null, message: string = REASONS[reason].message) {
  return { jsonrpc: '2.0', id, error: { code: REASONS[reason].code, message, data: { reason } } };
}

const gate = useGate(async () => {
  stub = await new StubSequencer().start();
  return { sequencers: [stub.url], accounts: [{ id: 'acme', keys: [key] }] };
});
after(async () => {
  await stub.stop();
});

describe('eth_chainId', () => {
  it('answers the host chain id from configuration', async () => {
    const r = await rpc(gate.port, 'eth_chainId', [], { id: 7 });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 7, result: '0x1237' });
  });
  it('picks the chain by Host, port stripped, case-insensitive', async () => {
    const r = await rpc(gate.port, 'eth_chainId', [], { host: 'FAST.Chain-B.example:8443', id: 'x' });
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 'x', result: '0xa' });
  });
  it('is answered from configuration, never upstream', async () => {
    const upstream = () => stub.calls.filter((c) => c.method !== 'eth_chainId').length;
    const before = upstream();
    const r = await rpc(gate.port, 'eth_chainId', []);
    assert.equal(r.json.result, '0x1237');
    assert.equal(upstream(), before);
  });
  it('refuses params', async () => {
    const r = await rpc(gate.port, 'eth_chainId', [1], { id: 3 });
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, errorBody('invalid_params', 3, 'Invalid params: eth_chainId takes no params'));
  });
  it('refuses a body over 512 bytes with 413, and accepts exactly 512', async () => {
    const base = { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] };
    const pad = (n: number) => {
      const s = JSON.stringify({ ...base, pad: '' });
      return JSON.stringify({ ...base, pad: 'x'.repeat(n - s.length) });
    };
    const at512 = await send({ port: gate.port, headers: { 'content-type': 'application/json' }, body: pad(512) });
    assert.equal(at512.status, 200);
    const r = await send({ port: gate.port, headers: { 'content-type': 'application/json', 'x-api-key': key }, body: pad(513) });
    assert.equal(r.status, 413);
    assert.equal(r.json.error.data.reason, 'payload_too_large');
    assert.equal(r.json.id, 1);
    // Without a key, 513 declared bytes are refused at the head, unread: 413 (size cap, docs/clients.md).
    const keyless = await send({ port: gate.port, headers: { 'content-type': 'application/json' }, body: pad(513) });
    assert.equal(keyless.status, 413);
    assert.equal(keyless.json.error.data.reason, 'payload_too_large');
  });
});

describe('host', () => {
  it('421 for an unassigned host, before the body is read', async () => {
    // Declare a large body and send none of it: the answer must come anyway.
    const r = await rawExchange(gate.port, 'POST / HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n');
    assert.match(r, /^HTTP\/1\.1 421 /);
    assert.ok(r.includes(JSON.stringify(errorBody('misdirected_host'))));
  });
  it('a request without Host is never served (the HTTP layer refuses it, or 421)', async () => {
    for (const version of ['1.0', '1.1']) {
      const r = await rawExchange(gate.port, `POST / HTTP/${version}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
      assert.ok(r === '' || /^HTTP\/1\.1 (400|421) /.test(r), r);
    }
  });
});

describe('size cap', () => {
  // The cap's 413 names the cap (64 KiB here) and the setting, whether the key is valid or absent.
  const CAP_413 = {
    ...errorBody('payload_too_large', null, 'Request body exceeds the size limit of 65536 bytes (limits.maxBodyBytes): send one transaction per request'),
  };
  CAP_413.error.data = { reason: 'payload_too_large', limitBytes: 65536, setting: 'limits.maxBodyBytes' } as never;
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: ['0x' + 'ab'.repeat(32_760)] });
  const body65537 = big.slice(0, 65_537);
  it('the test body is 65,537 bytes', () => assert.equal(Buffer.byteLength(body65537), 65_537));
  it('413 by Content-Length', async () => {
    const r = await send({ port: gate.port, headers: { 'content-type': 'application/json' }, body: body65537 });
    assert.equal(r.status, 413);
    assert.deepEqual(r.json, CAP_413);
  });
  it('413 for a chunked body, stopping at the cap', async () => {
    // With a valid key (without one, the read stops at 512 bytes: test/e2e/pre-auth-size.test.ts).
    const r = await send({ port: gate.port, headers: { 'content-type': 'application/json', 'x-api-key': key }, body: body65537, chunked: 8192 });
    assert.equal(r.status, 413);
    assert.deepEqual(r.json, CAP_413);
  });
  it('accepts a chunked body under the cap', async () => {
    const r = await send({
      port: gate.port,
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      chunked: 7,
    });
    assert.equal(r.status, 200);
    assert.equal(r.json.result, '0x1237');
  });
});

describe('parse', () => {
  const post = (body: string, ct = 'application/json') => send({ port: gate.port, headers: { 'content-type': ct }, body });
  it('400 batch_not_supported for a batch', async () => {
    const r = await post('[{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}]');
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, errorBody('batch_not_supported'));
  });
  it('-32700 for bad JSON', async () => {
    const r = await post('{"jsonrpc":');
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, errorBody('parse_error'));
  });
  it('-32700 for an empty body', async () => {
    const r = await post('');
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, -32700);
  });
  it('400 for a missing id, and for a null id', async () => {
    for (const body of ['{"jsonrpc":"2.0","method":"eth_chainId","params":[]}', '{"jsonrpc":"2.0","id":null,"method":"eth_chainId","params":[]}']) {
      const r = await post(body);
      assert.equal(r.status, 400);
      assert.deepEqual(r.json, errorBody('invalid_request', null, 'Invalid request: id is required and must be a number or a string'));
    }
  });
  it('echoes an integer id beyond 2^53 exactly as sent (a u64 or nanosecond-timestamp id)', async () => {
    for (const id of ['1763772000123456789', '18446744073709551615']) {
      const r = await post(`{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}`);
      assert.equal(r.status, 200);
      assert.equal(r.text, `{"jsonrpc":"2.0","id":${id},"result":"0x1237"}`);
    }
  });
  it('400 for an object id', async () => {
    const r = await post('{"jsonrpc":"2.0","id":{},"method":"eth_chainId","params":[]}');
    assert.deepEqual(r.json, errorBody('invalid_request'));
  });
  it('400 for a wrong jsonrpc version, echoing the id', async () => {
    const r = await post('{"jsonrpc":"1.0","id":"a","method":"eth_chainId","params":[]}');
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, errorBody('invalid_request', 'a', 'Invalid request: jsonrpc must be "2.0"'));
  });
  it('400 for params that are not an array, and for a non-string method', async () => {
    let r = await post('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":{}}');
    assert.deepEqual(r.json, errorBody('invalid_request', 1, 'Invalid request: params must be an array'));
    r = await post('{"jsonrpc":"2.0","id":1,"method":5,"params":[]}');
    assert.deepEqual(r.json, errorBody('invalid_request', 1, 'Invalid request: method must be a string'));
  });
  it('400 for a JSON scalar', async () => {
    const r = await post('"hello"');
    assert.deepEqual(r.json, errorBody('invalid_request'));
  });
  it('400 unsupported_content_type without application/json; charset parameter accepted', async () => {
    let r = await post('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', 'text/plain');
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, errorBody('unsupported_content_type'));
    r = await post('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', 'Application/JSON; charset=utf-8');
    assert.equal(r.status, 200);
  });
});

describe('method routing', () => {
  it('400 -32601 for an unknown method', async () => {
    const r = await rpc(gate.port, 'eth_getBalance', ['0x0', 'latest'], { id: 9 });
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, errorBody('method_not_found', 9));
  });
  it('-32602 for eth_sendRawTransaction without exactly one hex string', async () => {
    const msg = 'Invalid params: eth_sendRawTransaction takes exactly one 0x-prefixed hex string';
    for (const params of [[], ['0x00', '0x00'], ['0xabc'], ['0xzz'], [12], ['deadbeef'], [null]]) {
      const r = await rpc(gate.port, 'eth_sendRawTransaction', params, { key, id: 4 });
      assert.equal(r.status, 400, JSON.stringify(params));
      assert.deepEqual(r.json, errorBody('invalid_params', 4, msg));
    }
  });
});

describe('other paths and verbs', () => {
  it('404 with a JSON body', async () => {
    const r = await send({ port: gate.port, method: 'GET', path: '/metrics' });
    assert.equal(r.status, 404);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(r.json, errorBody('not_found'));
  });
  it('405 with a JSON body', async () => {
    for (const [method, path] of [
      ['GET', '/'],
      ['PUT', '/'],
      ['POST', '/health'],
      ['DELETE', '/ready'],
      ['POST', '/tip-addresses'],
    ] as const) {
      const r = await send({ port: gate.port, method, path });
      assert.equal(r.status, 405, `${method} ${path}`);
      assert.deepEqual(r.json, errorBody('method_not_allowed'));
    }
  });
});

describe('HEAD', () => {
  it('answers like GET without a body, so the next answer on the connection is read intact', async () => {
    const h = (path: string, extra = '') => `HEAD ${path} HTTP/1.1\r\nHost: localhost\r\n${extra}\r\n`;
    const raw = await rawExchange(
      gate.port,
      h('/health') +
        h('/ready') +
        h('/tip-addresses', `X-Api-Key: ${key}\r\n`) +
        h('/tip-addresses') +
        h('/') +
        h('/nope') +
        'GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    );
    // Every answer is a status line and headers; only the last (GET) has a body after them.
    const answers = raw.split(/(?=HTTP\/1\.1 \d{3} )/);
    assert.deepEqual(
      answers.map((a) => a.slice(9, 12)),
      ['200', '200', '200', '401', '405', '404', '200'],
    );
    for (const a of answers.slice(0, -1)) {
      assert.match(a, /\r\ncontent-type: application\/json\r\n/i);
      assert.ok(a.endsWith('\r\n\r\n'), `a HEAD answer carried a body: ${JSON.stringify(a)}`);
    }
    assert.match(answers[2]!, /\r\netag: "/i);
    const last = answers.at(-1)!;
    assert.equal(last.slice(last.indexOf('\r\n\r\n') + 4), '{"status":"ok"}');
  });
});
