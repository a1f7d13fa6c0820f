/**
 * The public contract over real HTTP on the real uWS server: exact status and body for every
 * front-end and parse/route reason, size caps (Content-Length and chunked), 421 before the body
 * is read, clients that leave mid-body, pipelining, /health and /ready, 404/405.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import { REASONS } from '../../src/reasons.js';
import { eventually, newKey } from '../support/harness.js';
import { rawExchange, rawSession, rpc, send } from '../support/http.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
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
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: ['0x' + 'ab'.repeat(32_760)] });
  const body65537 = big.slice(0, 65_537);
  it('the test body is 65,537 bytes', () => assert.equal(Buffer.byteLength(body65537), 65_537));
  it('413 by Content-Length', async () => {
    const r = await send({ port: gate.port, headers: { 'content-type': 'application/json' }, body: body65537 });
    assert.equal(r.status, 413);
    assert.deepEqual(r.json, errorBody('payload_too_large'));
  });
  it('413 for a chunked body, stopping at the cap', async () => {
    // With a valid key (without one, the read stops at 512 bytes: test/e2e/pre-auth-size.test.ts).
    const r = await send({ port: gate.port, headers: { 'content-type': 'application/json', 'x-api-key': key }, body: body65537, chunked: 8192 });
    assert.equal(r.status, 413);
    assert.deepEqual(r.json, errorBody('payload_too_large'));
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

describe('HTTP/1.1 pipelining', () => {
  const post = (body: string, extra = '') =>
    `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-Api-Key: ${key}\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const chainId = (id: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] });

  it('requests answered at once (eth_chainId, rejections before the forward) are answered in order', async () => {
    const raw = await rawExchange(gate.port, post(chainId('a')) + post('{"jsonrpc":') + post(chainId('b'), 'Connection: close\r\n'));
    const bodies = raw.split(/(?=HTTP\/1\.1 \d{3} )/).map((a) => JSON.parse(a.slice(a.indexOf('\r\n\r\n') + 4)));
    assert.deepEqual(
      bodies.map((b) => b.id),
      ['a', null, 'b'],
    );
    assert.equal(bodies[1].error.data.reason, 'parse_error');
  });

  it('a request pipelined behind a submission not yet answered closes the connection (docs/clients.md: the outcome is then uncertain)', async () => {
    // uWebSockets answers in order and refuses asynchronous pipelining: it closes the
    // connection. The submission was forwarded all the same; its log line says the client had gone.
    const tx = await sign1559({ nonce: 4242 });
    stub.delayMs = 100;
    try {
      const raw = await rawExchange(
        gate.port,
        post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [tx] })) + post(chainId('c')),
      );
      assert.equal(raw, '', 'no answer on a connection the server closed');
    } finally {
      stub.delayMs = 0;
    }
    await eventually(() => stub.sends().some((c) => c.params[0] === tx)); // the submission reached the sequencer
    const line = (await eventually(() => gate.logs.find((l) => l.includes(txHash(tx)) && l.includes('"status":200'))))!;
    assert.match(line, /"clientGone":true/);
    assert.equal((await rpc(gate.port, 'eth_chainId', [])).status, 200);
  });
});

describe('health and readiness', () => {
  it('/health is 200 {"status":"ok"}', async () => {
    const r = await send({ port: gate.port, method: 'GET', path: '/health' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { status: 'ok' });
  });
  it('/ready is 200 once accounts are loaded and a sequencer is up', async () => {
    const r = await send({ port: gate.port, method: 'GET', path: '/ready' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { status: 'ready' });
  });
  it('every answer carries X-Request-Id: GET and HEAD /health, /ready, 404, 405', async () => {
    const answers = await Promise.all([
      send({ port: gate.port, method: 'GET', path: '/health' }),
      send({ port: gate.port, method: 'HEAD', path: '/health' }),
      send({ port: gate.port, method: 'GET', path: '/ready' }),
      send({ port: gate.port, method: 'HEAD', path: '/ready' }),
      send({ port: gate.port, method: 'GET', path: '/nope' }),
      send({ port: gate.port, method: 'DELETE', path: '/health' }),
    ]);
    const ids = answers.map((r) => r.headers['x-request-id']);
    for (const id of ids) assert.match(String(id), /^[0-9a-z]+-[0-9a-z]+$/);
    assert.equal(new Set(ids).size, ids.length, 'each its own');
  });
});

describe('ambiguous framing (RFC 9112 §6.3)', () => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
  const head = 'POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n';
  const refused = async (headers: string, rest: string, detail: RegExp) => {
    const r = await rawSession(gate.port, head + headers + '\r\n' + rest);
    assert.match(r.text, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(r.text, /\r\nConnection: close\r\n/i);
    assert.equal(JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4)).error.data.reason, 'bad_framing');
    assert.equal((r.text.match(/HTTP\/1\.1 /g) ?? []).length, 1, 'one answer, nothing read as a second request');
    assert.ok(r.serverClosed, 'the connection is closed');
    const line = gate.logs.map((l) => JSON.parse(l)).findLast((l) => l.reason === 'bad_framing');
    assert.match(line.detail, detail);
  };
  it('two Content-Length headers, equal or not: 400 bad_framing, closed', async () => {
    await refused(`Content-Length: ${body.length}\r\nContent-Length: ${body.length}\r\n`, body, /2 Content-Length headers/);
    await refused(`Content-Length: ${body.length}\r\nContent-Length: 5\r\n`, body, /2 Content-Length headers/);
  });
  it('Transfer-Encoding other than exactly chunked: 400 bad_framing, closed', async () => {
    const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    await refused('Transfer-Encoding: chunked, gzip\r\n', chunked, /Transfer-Encoding "chunked, gzip"/);
    await refused('Transfer-Encoding: gzip\r\n', chunked, /Transfer-Encoding "gzip"/);
  });
  it('an invalid Content-Length: closed without an answer, and logged as exactly that (no 413 nobody got)', async () => {
    for (const cl of ['abc', '-1', '59.0', '+59', '00000000000000000059']) {
      const before = gate.logs.length;
      const r = await rawSession(gate.port, head + `Content-Length: ${cl}\r\n\r\n` + body);
      assert.equal(r.text, '', cl);
      assert.ok(r.serverClosed, cl);
      const lines = gate.logs.slice(before).map((l) => JSON.parse(l));
      assert.equal(lines.filter((l) => l.status !== undefined).length, 0, `no line claims an answer for ${cl}`);
      const line = lines.find((l) => l.msg === 'closed unanswered');
      assert.equal(line?.reason, 'bad_framing', cl);
      assert.match(line.detail, /invalid Content-Length .*closed without an answer/);
    }
  });
  it('a GET with a body is answered, then closed (the body is never taken for a request)', async () => {
    const r = await rawSession(gate.port, 'GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 40\r\n\r\nGET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n');
    assert.equal((r.text.match(/HTTP\/1\.1 /g) ?? []).length, 1);
    assert.match(r.text, /^HTTP\/1\.1 200 OK/);
    assert.ok(r.serverClosed);
  });
});

describe('clients that leave', () => {
  /** Writes the start of a request, then disconnects 50 ms later. */
  const writeAndLeave = (start: string) =>
    new Promise<void>((resolve) => {
      const s = connect(gate.port, '127.0.0.1', () => {
        s.write(start);
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 50);
      });
    });
  it('a client that disconnects mid-body leaves the server healthy', async () => {
    const logged = gate.logs.length;
    await writeAndLeave(
      `POST / HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":"2.0",`,
    );
    const r = await rpc(gate.port, 'eth_chainId', []);
    assert.equal(r.status, 200);
    const h = await send({ port: gate.port, method: 'GET', path: '/health' });
    assert.equal(h.status, 200);
    // The abandoned request was logged once, as client_closed, with how far its body got.
    const line = gate.logs.slice(logged).find((l) => l.includes('"reason":"client_closed"'));
    assert.ok(line);
    assert.match(line, /"detail":"connection closed after 17 of 1000 body bytes"/);
  });
  it('a chunked body cut off is logged with the bytes received', async () => {
    const logged = gate.logs.length;
    await writeAndLeave('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"jso\r\n');
    const line = (await eventually(() => gate.logs.slice(logged).find((l) => l.includes('"reason":"client_closed"'))))!;
    assert.match(line, /"detail":"connection closed after 5 bytes of a chunked body"/);
  });
  it('a body trickling in slower than the idle timeout is dropped, unanswered, never forwarded', async () => {
    // One byte every 2 s: each byte arrives well within the ~10 s timer, the whole body never
    // does. uWS does not restart its timer for body data, so the connection is closed.
    const tx = await sign1559({ nonce: 77_001 });
    const logged = gate.logs.length;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'trickle', method: 'eth_sendRawTransaction', params: [tx] });
    const { answer, sent, heldOpen } = await new Promise<{ answer: string; sent: number; heldOpen: boolean }>((resolve) => {
      let answer = '';
      let sent = 0;
      let heldOpen = false;
      const s = connect(gate.port, '127.0.0.1', () => {
        s.write(`POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-Api-Key: ${key}\r\nContent-Length: ${body.length}\r\n\r\n`);
        const drip = setInterval(() => {
          if (sent < body.length - 1) s.write(body[sent++]!); // the last byte is never sent
        }, 2000);
        // A guard, not a measurement: a connection still open after a minute was held open.
        const guard = setTimeout(() => {
          heldOpen = true;
          s.destroy();
        }, 60_000);
        s.on('data', (d) => (answer += d.toString()));
        s.on('close', () => {
          clearInterval(drip);
          clearTimeout(guard);
          resolve({ answer, sent, heldOpen });
        });
      });
    });
    assert.equal(heldOpen, false, 'the trickle held the connection open');
    assert.equal(answer, '', 'no answer is written');
    assert.ok(sent >= 3 && sent < body.length - 1, `bytes kept arriving until the close (${sent})`);
    const line = (await eventually(() => gate.logs.slice(logged).find((l) => l.includes('"status":499') && l.includes('"stage":"size_cap"'))))!;
    assert.match(line, /"reason":"client_closed"/);
    // How far the body got, against the declared length (a byte written as the server closed
    // may not have arrived).
    const m = /"detail":"connection closed after (\d+) of (\d+) body bytes"/.exec(line);
    assert.ok(m !== null, line);
    assert.equal(Number(m[2]), body.length);
    assert.ok(Number(m[1]) <= sent && Number(m[1]) >= sent - 1, `${m[1]} received of ${sent} sent`);
    assert.equal(stub.sends().filter((c) => JSON.stringify(c.params).includes(tx)).length, 0);
  });
});

describe('logging', () => {
  it('one line per rejection with stage, reason and duration', async () => {
    await rpc(gate.port, 'eth_foo', [], { id: 'log-me' });
    const line = gate.logs.map((l) => JSON.parse(l)).find((l) => l.method === 'eth_foo');
    assert.ok(line);
    assert.equal(line.reason, 'method_not_found');
    assert.equal(line.stage, 'route');
    assert.equal(line.status, 400);
    assert.equal(typeof line.us, 'number');
    assert.equal(typeof line.reqId, 'string');
  });
});
