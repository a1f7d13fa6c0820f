/**
 * The front end under arbitrary header bytes, over raw TCP on the real server: header names and
 * values of every byte value (control bytes, CR and LF alone, 0x80-0xFF, punctuation RFC 9110
 * allows in names and punctuation it does not), repeated headers (Host, X-Api-Key,
 * Content-Length, Transfer-Encoding), up to 60 header lines and absurd lengths. Each request on
 * its own connection gets exactly one answer or none, never two, never a 5xx, and the server
 * closes every connection itself: the classes the parser holds unanswered are closed by its
 * idle timer (docs/clients.md "HTTP framing": ~10-12 s), the deadline here is a generous 40 s.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { newKey } from '../support/harness.js';
import { useGate } from '../support/gate-fixture.js';

const key = newKey();
const gate = useGate({ accounts: [{ id: 'acme', keys: [key] }] });

const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
const byte = fc.integer({ min: 0, max: 255 });
const bytes = (min: number, max: number) => fc.array(byte, { minLength: min, maxLength: max }).map((a) => Buffer.from(a));
const text = (s: string) => Buffer.from(s, 'latin1');

/** One header line: an arbitrary name and value, a token name with odd bytes, a repeat of a header that must appear once, or an absurd length. */
const headerLine = fc.oneof(
  fc.tuple(bytes(1, 12), bytes(0, 24)).map(([n, v]) => Buffer.concat([n, text(': '), v, text('\r\n')])),
  fc
    .tuple(fc.constantFrom('X', 'X-A', 'Accept'), byte, bytes(0, 8))
    .map(([n, b, v]) => Buffer.concat([text(n), Buffer.from([b]), text('Foo: '), v, text('\r\n')])),
  fc
    .tuple(
      fc.constantFrom('Host', 'X-Api-Key', 'Content-Length', 'Transfer-Encoding', 'Content-Type'),
      fc.constantFrom('localhost', key, '5', 'chunked', 'application/json', ''),
    )
    .map(([n, v]) => text(`${n}: ${v}\r\n`)),
  fc.tuple(fc.constantFrom('X-Long', 'X-Api-Key', 'Host'), fc.integer({ min: 3000, max: 70_000 })).map(([n, len]) => text(`${n}: ${'a'.repeat(len)}\r\n`)),
  fc
    .tuple(fc.constantFrom('X-Api-Key', 'Host', 'X-A'), fc.constantFrom('', ' ', '\t'), bytes(1, 3))
    .map(([n, ws, tail]) => Buffer.concat([text(`${n}:${ws}${n === 'X-Api-Key' ? key : n === 'Host' ? 'localhost' : 'v'}`), tail, text('\r\n')])),
);

/** A request: a verb and path, the usual headers, then the fuzzed lines mixed in. */
const request = fc
  .tuple(fc.constantFrom('POST /', 'GET /health', 'GET /tip-addresses', 'GET /'), fc.array(headerLine, { maxLength: 60 }), fc.nat(60), fc.boolean())
  .map(([start, lines, at, withKey]) => {
    const std = [text('Host: localhost\r\n'), text('Content-Type: application/json\r\n'), ...(withKey ? [text(`X-Api-Key: ${key}\r\n`)] : [])];
    const all = [...lines];
    all.splice(at % (all.length + 1), 0, ...std);
    const isPost = start.startsWith('POST');
    return Buffer.concat([text(`${start} HTTP/1.1\r\n`), ...all, text(isPost ? `Content-Length: ${body.length}\r\n\r\n${body}` : '\r\n')]);
  });

interface Outcome {
  readonly raw: string;
  readonly statuses: number[];
  readonly serverClosed: boolean;
}

function exchange(req: Buffer, deadlineMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const s = connect(gate.port, '127.0.0.1', () => s.write(req));
    let out = '';
    let timedOut = false;
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('error', () => {});
    const t = setTimeout(() => {
      timedOut = true;
      s.destroy();
    }, deadlineMs);
    s.on('close', () => {
      clearTimeout(t);
      resolve({ raw: out, statuses: [...out.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])), serverClosed: !timedOut });
    });
  });
}

describe('HTTP front end fuzz: header bytes, repeats, lengths', () => {
  it('every request: one answer or none, never two, never a 5xx; every connection closed by the server', async () => {
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
    const cases = fc.sample(request, { numRuns: 400, seed });
    // All at once: the held ones wait out the parser's idle timer together.
    const outcomes = await Promise.all(cases.map((c) => exchange(c, 40_000)));
    let answered = 0;
    for (const [i, o] of outcomes.entries()) {
      const what = `seed ${seed}, case ${i}: ${JSON.stringify(cases[i]!.toString('latin1').slice(0, 300))} -> ${JSON.stringify(o.raw.slice(0, 200))}`;
      assert.ok(o.statuses.length <= 1, `never two answers (${what})`);
      if (o.statuses.length === 1) {
        answered++;
        assert.ok(o.statuses[0]! < 500, `never a 5xx (${what})`);
      }
      assert.ok(o.serverClosed, `closed by the server, not held (${what})`);
    }
    assert.ok(answered > 0 && answered < cases.length, `both classes met: ${answered} of ${cases.length} answered`);
  });

  it('a repeated Host or X-Api-Key anywhere among fuzzed lines is never served as the first one', async () => {
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
    const filler = fc.array(
      fc.tuple(fc.stringMatching(/^X-[A-Za-z0-9-]{1,10}$/), fc.stringMatching(/^[!-~]{0,20}$/)).map(([n, v]) => `${n}: ${v}\r\n`),
      { maxLength: 20 },
    );
    const cases = fc.sample(
      fc.tuple(filler, filler, fc.constantFrom(['Host', 'localhost'], ['X-Api-Key', key]), fc.constantFrom('localhost', 'fast.chain-b.example', key, 'other')),
      { numRuns: 60, seed },
    );
    const outcomes = await Promise.all(
      cases.map(([a, b, [name, first], second]) =>
        exchange(
          text(
            `POST / HTTP/1.1\r\n${name === 'Host' ? '' : 'Host: localhost\r\n'}${a.join('')}${name}: ${first}\r\n${b.join('')}${name}: ${second}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
          ),
          40_000,
        ),
      ),
    );
    for (const [i, o] of outcomes.entries()) {
      assert.deepEqual(o.statuses, [400], `seed ${seed}, case ${i}: ${o.raw.slice(0, 200)}`);
      assert.match(o.raw, /"reason":"duplicate_header"/);
    }
  });
});
