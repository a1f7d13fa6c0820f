/**
 * The rehearsal's client (src/rehearsal/client.ts) against a server that answers anything: an
 * answer counts only as a 200 whose body, read to its Content-Length, holds what was expected
 * (split across reads or not); anything else ends the call with what was read, a close or an error
 * ends it with that, and the next call opens a new connection. No call is left unanswered.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { RehearsalClient } from '../../src/rehearsal/client.js';

/** A server whose every request is answered by `answer` (chunks written with a pause between). */
function server(answer: (s: Socket) => void): Promise<{ port: number; server: Server; connections: () => number }> {
  let n = 0;
  const srv = createServer((s) => {
    n++;
    s.on('error', () => {});
    s.on('data', () => answer(s));
  });
  return new Promise((r) => srv.listen(0, '127.0.0.1', () => r({ port: (srv.address() as AddressInfo).port, server: srv, connections: () => n })));
}

const REQUEST = Buffer.from('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}', 'latin1');
const EXPECT = '"result":"0xabc"';
const ok = (body = `{"jsonrpc":"2.0","id":1,${EXPECT}}`) =>
  `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
const servers: Server[] = [];
after(() => {
  for (const s of servers) s.close();
});

describe('the rehearsal client', () => {
  it('a 200 holding the expected result is answered, on one kept-alive connection, whole or split', async () => {
    let split = false;
    const s = await server((sock) => {
      const text = ok();
      if (!split) sock.write(text);
      else {
        sock.write(text.slice(0, 20));
        setTimeout(() => sock.write(text.slice(20, 60)), 5);
        setTimeout(() => sock.write(text.slice(60)), 10);
      }
      split = !split;
    });
    servers.push(s.server);
    const c = new RehearsalClient(s.port);
    for (let i = 0; i < 4; i++) assert.equal(await c.send(REQUEST, EXPECT), null);
    assert.equal(s.connections(), 1);
    c.close();
  });

  it('anything else is a problem, said with what was read; a close or garbage opens a new connection next time', async () => {
    const answers = [
      'HTTP/1.1 401 Unauthorized\r\nContent-Length: 2\r\n\r\n{}',
      ok('{"jsonrpc":"2.0","id":1,"result":"0xdef"}'),
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'close',
      'x'.repeat(70_000),
      ok(),
    ];
    let k = 0;
    const s = await server((sock) => {
      const a = answers[k++]!;
      if (a === 'close') sock.destroy();
      else sock.write(a);
    });
    servers.push(s.server);
    const c = new RehearsalClient(s.port);
    const got: (string | null)[] = [];
    for (let i = 0; i < answers.length; i++) got.push(await c.send(REQUEST, EXPECT));
    assert.match(got[0]!, /^HTTP\/1.1 401/);
    assert.match(got[1]!, /0xdef/);
    assert.match(got[2]!, /without Content-Length/);
    assert.match(got[3]!, /closed|ECONNRESET/);
    assert.match(got[4]!, /too long|without Content-Length/);
    assert.equal(got[5], null, 'answered again once the server answers');
    assert.ok(s.connections() >= 3, `connections ${s.connections()}`);
    c.close();
  });

  it('a call while one runs, and a call cut by close, end with a problem, never unanswered', async () => {
    const s = await server(() => {}); // never answers
    servers.push(s.server);
    const c = new RehearsalClient(s.port);
    const first = c.send(REQUEST, EXPECT);
    assert.equal(await c.send(REQUEST, EXPECT), 'a call is still running');
    c.close();
    assert.equal(await first, 'closed');
  });

  it('a refused connection ends the call with the error', async () => {
    const s = await server(() => {});
    const port = s.port;
    await new Promise<void>((r) => s.server.close(() => r()));
    const c = new RehearsalClient(port);
    assert.match((await c.send(REQUEST, EXPECT))!, /ECONNREFUSED|closed/);
    c.close();
  });
});
