/**
 * One request, at most one answer: every answer txgate sends with `Connection: close` (a framing
 * it refuses, a body it does not read, a draining server) ends the connection so that no byte
 * after that request's headers is ever parsed as a request, whether the bytes behind it arrive
 * in the same TCP segment or later (RFC 9112 §6.3 and §9.6: the request-smuggling shape behind a
 * proxy that frames the bytes differently). Over real TCP on the real uWS server.
 */
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import { eventually, newKey, startGate } from '../support/harness.js';
import { rawSegments, send, statusLines } from '../support/http.js';
import { StubSequencer } from '../support/stub-sequencer.js';
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

const chainIdBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
/** The appended request: a distinctive path and id, so any trace of it in answers or logs shows. */
const APPENDED_ID = 'smuggled-7f3a';
const appendedBody = JSON.stringify({ jsonrpc: '2.0', id: APPENDED_ID, method: 'eth_chainId', params: [] });
const appended = `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${appendedBody.length}\r\n\r\n${appendedBody}`;
const appendedGet = 'GET /smuggled-path HTTP/1.1\r\nHost: localhost\r\n\r\n';
const head = 'POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n';

/** Log lines written since `from`, parsed. */
const linesSince = (from: number) => gate.logs.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>);

/**
 * Sends `parts` (split across segments `gapMs` apart), then checks: at most one answer, never
 * the appended request's, the connection closed by the server, and no log line for the appended
 * request. Returns the answer's status line ('' when closed unanswered) and the new log lines.
 */
async function atMostOne(parts: string[], gapMs: number): Promise<{ status: string; lines: Record<string, unknown>[] }> {
  const from = gate.logs.length;
  const r = await rawSegments(gate.port, parts, gapMs);
  const answers = statusLines(r.text);
  assert.ok(answers.length <= 1, `at most one answer, got ${answers.length}:\n${r.text}`);
  assert.ok(!r.text.includes(APPENDED_ID), 'the appended request was never answered');
  assert.ok(!r.text.includes('"result":"0x1237"'), 'no eth_chainId answer');
  assert.ok(r.serverClosed, 'the server closed the connection');
  if (answers.length === 1) assert.match(r.text, /\r\nConnection: close\r\n/i);
  // Let the deferred answer's log line land before reading the log.
  await new Promise((res) => setTimeout(res, 30));
  const lines = linesSince(from);
  for (const l of lines) {
    assert.notEqual(l.path, '/smuggled-path', 'the appended GET was never handled');
    assert.notEqual(l.method, 'eth_chainId', 'the appended eth_chainId was never handled');
    assert.ok(l.msg !== 'request' && l.msg !== 'accepted', 'no request was served');
  }
  return { status: answers[0] ?? '', lines };
}

/** The refusal's one log line: either answered 400, or closed unanswered with the reason. */
function refusalLogged(status: string, lines: Record<string, unknown>[], reason: string, httpStatus: number) {
  const mine = lines.filter((l) => l.reason === reason);
  assert.equal(mine.length, 1, `one line for the refusal: ${JSON.stringify(lines)}`);
  if (status === '') {
    assert.equal(mine[0]!.msg, 'closed unanswered');
    assert.equal(mine[0]!.status, undefined, 'no line claims an answer nobody got');
  } else {
    assert.match(status, new RegExp(`^HTTP/1\\.1 ${httpStatus} `));
    assert.equal(mine[0]!.status, httpStatus);
  }
}

describe('a framing txgate refuses, with a complete request appended behind it', () => {
  // What a last-Content-Length proxy sends as one request: the first Content-Length covers the
  // eth_chainId body, the second that body and the appended request.
  const twoCl = `Content-Length: ${chainIdBody.length}\r\nContent-Length: ${chainIdBody.length + appended.length}\r\n`;
  const smuggle = head + twoCl + '\r\n' + chainIdBody + appended;

  it('in one segment: closed without an answer, logged as closed unanswered', async () => {
    const { status, lines } = await atMostOne([smuggle], 0);
    assert.equal(status, '', 'the request behind it makes the front end close at once');
    refusalLogged(status, lines, 'bad_framing', 400);
  });
  it('split across segments, at every kind of boundary: at most the 400, never the appended answer', async () => {
    const cuts = [
      smuggle.indexOf('\r\n\r\n') + 4, // after the headers
      smuggle.indexOf('\r\n\r\n') + 10, // inside the first body
      smuggle.indexOf(appended), // exactly before the appended request
      smuggle.indexOf(appended) + 7, // inside its request line
      smuggle.length - 3, // inside the appended body
    ];
    for (const cut of cuts)
      for (const gap of [1, 40]) {
        const { status, lines } = await atMostOne([smuggle.slice(0, cut), smuggle.slice(cut)], gap);
        refusalLogged(status, lines, 'bad_framing', 400);
      }
  });
  it('a GET appended instead of a POST', async () => {
    const s = head + `Content-Length: ${chainIdBody.length}\r\nContent-Length: ${chainIdBody.length + appendedGet.length}\r\n\r\n` + chainIdBody + appendedGet;
    for (const gap of [0, 40]) {
      const cut = s.indexOf(appendedGet);
      const { status, lines } = await atMostOne(gap === 0 ? [s] : [s.slice(0, cut), s.slice(cut)], gap);
      refusalLogged(status, lines, 'bad_framing', 400);
    }
  });
  it('Transfer-Encoding variants: chunked plus another coding, gzip alone, twice, or beside a Content-Length', async () => {
    const chunk = (b: string) => `${b.length.toString(16)}\r\n${b}\r\n0\r\n\r\n`;
    const variants = [
      'Transfer-Encoding: chunked, gzip\r\n',
      'Transfer-Encoding: gzip, chunked\r\n',
      'Transfer-Encoding: gzip\r\n',
      'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n',
      'Transfer-Encoding: identity\r\n',
    ];
    for (const te of variants) {
      const s = head + te + '\r\n' + chunk(chainIdBody) + appended;
      for (const gap of [0, 40]) {
        const cut = s.indexOf(appended);
        const { status, lines } = await atMostOne(gap === 0 ? [s] : [s.slice(0, cut), s.slice(cut)], gap);
        if (status !== '') refusalLogged(status, lines, 'bad_framing', 400);
      }
    }
    // Content-Length beside Transfer-Encoding: the front end closes it itself, or txgate refuses.
    const both = head + `Content-Length: ${chainIdBody.length}\r\nTransfer-Encoding: chunked\r\n\r\n` + chainIdBody + appended;
    await atMostOne([both], 0);
    await atMostOne([both.slice(0, both.indexOf(appended)), appended], 40);
  });
  it('an invalid Content-Length with a request behind it: closed unanswered', async () => {
    const s = head + 'Content-Length: 5x\r\n\r\n' + chainIdBody + appended;
    const { status } = await atMostOne([s], 0);
    assert.equal(status, '');
  });
  it('the connection serves nothing after the refusal, yet the server serves the next connection', async () => {
    await atMostOne([smuggle], 0);
    const r = await rawSegments(gate.port, [head + `Content-Length: ${chainIdBody.length}\r\nConnection: close\r\n\r\n${chainIdBody}`], 0);
    assert.equal(statusLines(r.text).length, 1);
    assert.match(r.text, /"result":"0x1237"/);
  });
});

describe('every other answer that closes its connection', () => {
  it('a GET with a body and a request behind the body: at most the GET answer', async () => {
    const body = '{"x":1}';
    for (const path of ['/health', '/ready', '/tip-addresses', '/nope']) {
      const s = `GET ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\r\n\r\n${body}` + appended;
      const { status } = await atMostOne([s], 0);
      assert.equal(status, '', path);
      const cut = s.indexOf(appended);
      const late = await atMostOne([s.slice(0, cut), appended], 40);
      assert.notEqual(late.status, '', `${path}: answered when nothing follows at once`);
    }
  });
  it('a GET with a body, alone: answered, then closed (as before)', async () => {
    const r = await rawSegments(gate.port, ['GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}'], 0);
    assert.deepEqual(statusLines(r.text), ['HTTP/1.1 200 OK']);
    assert.match(r.text, /\r\nConnection: close\r\n/i);
    assert.ok(r.serverClosed);
  });
  it('a 405 with a body and a request behind it', async () => {
    const s = `PUT /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}` + appended;
    await atMostOne([s], 0);
    const late = await atMostOne([s.slice(0, s.indexOf(appended)), appended], 40);
    assert.match(late.status, /^HTTP\/1\.1 405 /);
  });
  it('a refusal before the body is read (421 wrong Host, 413 declared too large or keyless over 512 bytes, 401 a wrong key over 512 bytes) with a request behind the body', async () => {
    const cases: [string, number, string][] = [
      ['421', 421, `POST / HTTP/1.1\r\nHost: unknown.example\r\nContent-Type: application/json\r\nContent-Length: ${chainIdBody.length}\r\n\r\n${chainIdBody}`],
      ['413', 413, `${head}Content-Length: ${gate.config.limits.maxBodyBytes + 1}\r\n\r\n${'x'.repeat(gate.config.limits.maxBodyBytes + 1)}`],
      // No key and more than the public 512 bytes declared: 413 at the head, the body unread.
      ['413 keyless', 413, `${head}Content-Length: 1000\r\n\r\n${'x'.repeat(1000)}`],
      // A key that does not authenticate and more than 512 bytes declared: 401 at the head, unread.
      ['401', 401, `${head}X-Api-Key: not-a-key-of-ours\r\nContent-Length: 1000\r\n\r\n${'x'.repeat(1000)}`],
    ];
    for (const [name, code, req] of cases) {
      const one = await atMostOne([req + appended], 0);
      assert.equal(one.status, '', name);
      assert.equal(one.lines.filter((l) => l.msg === 'closed unanswered').length, 1, `${name}: logged as closed unanswered`);
      const late = await atMostOne([req, appended], 40);
      assert.match(late.status, new RegExp(`^HTTP/1\\.1 ${code} `), name);
    }
  });
  it('a chunked body refused at the cap while it streams, with a request behind it', async () => {
    const big = 'x'.repeat(gate.config.limits.maxBodyBytes + 10);
    const req = `${head}Transfer-Encoding: chunked\r\n\r\n${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`;
    const one = await atMostOne([req + appended], 0);
    assert.equal(one.status, '');
    const late = await atMostOne([req, appended], 40);
    assert.match(late.status, /^HTTP\/1\.1 413 /);
  });
  it('a refused submission whose body was read keeps the connection (no close, sync pipelining intact)', async () => {
    const raw = await sign1559({ nonce: 1 });
    const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'eth_sendRawTransaction', params: [raw] });
    const r = await rawSegments(
      gate.port,
      [`${head}Content-Length: ${body.length}\r\n\r\n${body}` + appended.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n')],
      0,
    );
    const answers = statusLines(r.text);
    assert.deepEqual(answers, ['HTTP/1.1 401 Unauthorized', 'HTTP/1.1 200 OK'], 'two requests, two answers, in order');
  });
});

describe('draining', () => {
  it('answers on open keep-alive connections close them, and nothing behind is read', async () => {
    const slow = await new StubSequencer().start();
    slow.delayMs = 400;
    const g = await startGate({ sequencers: [slow.url], accounts: [{ id: 'acme', keys: [key] }] });
    try {
      await eventually(async () => (await fetch(`http://127.0.0.1:${g.port}/ready`)).status === 200);
      // A keep-alive connection opened before the drain, and a submission in flight.
      const sock = connect(g.port, '127.0.0.1');
      await new Promise((r) => sock.once('connect', r));
      let text = '';
      sock.on('data', (d) => (text += d.toString()));
      sock.on('error', () => {});
      const closed = new Promise((r) => sock.once('close', r));
      const raw = await sign1559({ nonce: 2 });
      // Keep-alive: a client that sent Connection: close gets no Connection header back.
      const agent = new Agent({ keepAlive: true });
      const sub = send({
        port: g.port,
        agent,
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'eth_sendRawTransaction', params: [raw] }),
      });
      await eventually(() => slow.sends().length === 1);
      const stopping = g.stop();
      assert.ok(g.app.readiness.draining);
      sock.write(head + `Content-Length: ${chainIdBody.length}\r\n\r\n${chainIdBody}` + appended);
      await closed;
      const answers = statusLines(text);
      assert.ok(answers.length <= 1, text);
      assert.ok(!text.includes(APPENDED_ID));
      if (answers.length === 1) assert.match(text, /\r\nConnection: close\r\n/i);
      const s = await sub;
      assert.equal(s.status, 200, 'the submission in flight is answered');
      assert.equal(s.headers.connection, 'close', 'and its connection closed');
      await stopping;
      agent.destroy();
    } finally {
      await slow.stop();
    }
  });
});
