/**
 * The id rule (src/rpc/rpc-id.ts): an id is echoed as the JSON text it arrived as, on POST / and on
 * the WebSocket transport (through the stages, and for a frame refused before them): every spelling
 * JSON allows for a number (sign, zero, fraction, exponent of either case and sign) and for a
 * string (every escape), against JSON.parse as the judge of what the text means.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import WebSocket from 'ws';
import { idJsonOf, idJsonOfText, idLiteral } from '../../src/rpc/rpc-id.js';
import { eventually, newKey } from '../support/harness.js';
import { send } from '../support/http.js';
import { jsonNumberText } from '../support/json-text.js';
import { keysNeverLogged, useGate } from '../support/gate-fixture.js';

keysNeverLogged();

/** A JSON number as the grammar allows it, one a double holds (a finite id). */
const jsonNumber = jsonNumberText.filter((t) => Number.isFinite(JSON.parse(t)));

/** A JSON string literal with any escapes a client may use (`\u` of any case, the short escapes, raw text). */
const jsonString = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 4 }).map((s) => JSON.stringify(s).slice(1, -1)),
      fc.integer({ min: 0, max: 0xffff }).map((c) => `\\u${c.toString(16).padStart(4, '0')}`),
      fc.integer({ min: 0, max: 0xffff }).map((c) => `\\u${c.toString(16).padStart(4, '0').toUpperCase()}`),
      fc.constantFrom('\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t'),
    ),
    { maxLength: 6 },
  )
  .map((parts) => `"${parts.join('')}"`);

const SPELLINGS = ['1e2', '1E2', '1e+2', '1E-2', '1.0', '1.50', '-0', '0', '-0.0', '0e0', '12345678901234567890', '-1', '"\\u0041"', '"a\\/b"', '"x"', '""'];

describe('idLiteral / idJsonOf', () => {
  it('every spelling JSON allows for a number id is echoed as written (property)', () => {
    fc.assert(
      fc.property(jsonNumber, fc.constantFrom('', ' ', '\n\t'), (lit, ws) => {
        const text = `{"jsonrpc":"2.0",${ws}"id"${ws}:${ws}${lit}${ws},"method":"m","params":["0x${'ab'.repeat(50)}"]}`;
        const id = (JSON.parse(text) as { id: number }).id;
        assert.equal(idJsonOf(text, id), lit);
        assert.equal(JSON.parse(idJsonOf(text, id)), id, 'the echo means the same id');
      }),
      { numRuns: 2000 },
    );
  });

  it('a string id keeps its escapes (property)', () => {
    fc.assert(
      fc.property(jsonString, (lit) => {
        const text = `{"id":${lit},"jsonrpc":"2.0","method":"m"}`;
        const id = (JSON.parse(text) as { id: string }).id;
        assert.equal(idJsonOf(text, id), lit);
      }),
      { numRuns: 1000 },
    );
  });

  it('the top-level member only, the last of duplicates, a key spelt with escapes', () => {
    assert.equal(idLiteral('{"params":[{"id":1}],"x":{"id":2,"s":"}\\""},"id":1e2,"method":"m"}'), '1e2');
    assert.equal(idLiteral('{"method":"\\"id\\":5","id":-0}'), '-0');
    assert.equal(idLiteral('{"id":1,"id":1.0}'), '1.0');
    assert.equal(idLiteral('{"\\u0069d":1.0}'), '1.0');
    assert.equal(idLiteral('{"\\u0069\\u0064":"\\u0041"}'), '"\\u0041"');
    assert.equal(idLiteral('{"i\\\\d":5,"id":7}'), '7', 'a key with an escaped backslash is not "id"');
    assert.equal(idLiteral('{"jsonrpc":"2.0","method":"m"}'), undefined);
  });

  it('a body refused before parsing: its id as sent, null when there is none to match', () => {
    assert.equal(idJsonOfText('{"id":1.0,"method":"m"}'), '1.0');
    assert.equal(idJsonOfText('{"id":null}'), 'null');
    assert.equal(idJsonOfText('{"id":{"a":1}}'), 'null');
    assert.equal(idJsonOfText('[{"id":1}]'), 'null');
    assert.equal(idJsonOfText('{"id":1'), 'null');
  });
});

describe('echoed as sent, end to end', () => {
  const key = newKey();
  const gate = useGate({ accounts: [{ id: 'acme', keys: [key] }], config: { websocket: { enabled: true } } });

  const body = (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}`;

  it('POST /: each spelling comes back in the answer text, in results and in errors', async () => {
    for (const id of SPELLINGS) {
      const ok = await send({ port: gate.port, headers: { 'content-type': 'application/json' }, body: body(id) });
      assert.equal(ok.status, 200);
      assert.ok(ok.text.includes(`"id":${id},`), `${id}: ${ok.text}`);
      const err = await send({ port: gate.port, headers: { 'content-type': 'application/json' }, body: `{"jsonrpc":"2.0","id":${id},"method":"eth_nope"}` });
      assert.ok(err.text.includes(`"id":${id},`), `${id}: ${err.text}`);
    }
  });

  it('WebSocket: each spelling comes back in its frame, also for a frame refused before the stages', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${gate.port}/`, { headers: { host: 'localhost', 'x-api-key': key } });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const texts: string[] = [];
    ws.on('message', (d) => texts.push(d.toString()));
    for (const id of SPELLINGS) ws.send(body(id));
    // Over the body cap (64 KiB): answered payload_too_large before any stage, by its id.
    ws.send(`{"jsonrpc":"2.0","id":1.0e0,"method":"eth_chainId","params":["${'a'.repeat(70_000)}"]}`);
    await eventually(() => texts.length === SPELLINGS.length + 1, 5000);
    for (const id of SPELLINGS)
      assert.ok(
        texts.some((t) => t.includes(`"id":${id},`) && t.includes('"result":"0x1237"')),
        `${id}: ${texts.join('\n')}`,
      );
    assert.ok(
      texts.some((t) => t.includes('"id":1.0e0,') && t.includes('payload_too_large')),
      texts.join('\n'),
    );
    ws.close();
  });
});
