/**
 * The public contract over real HTTP, on its connections: HTTP/1.1 pipelining, /health and
 * /ready, ambiguous framing (RFC 9112 §6.3), clients that leave mid-body or trickle it in, and
 * one log line per rejection. Status and body for every reason: http-contract.test.ts.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import { eventually, newKey } from '../support/harness.js';
import { rawExchange, rawSession, rpc, send } from '../support/http.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { useGate } from '../support/gate-fixture.js';

let stub: StubSequencer;
const key = newKey();

const gate = useGate(async () => {
  stub = await new StubSequencer().start();
  return { sequencers: [stub.url], accounts: [{ id: 'acme', keys: [key] }] };
});
after(async () => {
  await stub.stop();
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
