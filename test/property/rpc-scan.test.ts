/**
 * The envelope read without JSON.parse (src/rpc/rpc-scan.ts) is an exact shortcut: wherever it
 * answers, its answer is the JSON.parse path's (the parse stage's readRequest) for the same
 * text (and what it says of the params, that they are all 0x-hex, is true), over generated bodies (members in any order, any whitespace, every id spelling,
 * escapes, duplicates, extra members, nested values, number params) and their random mutations;
 * and it does answer for what clients send (viem's and ethers' bodies), so the shortcut is taken.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { scanRequest } from '../../src/rpc/rpc-scan.js';
import { readRequest } from '../../src/stages/parse.js';
import { idJsonOfText } from '../../src/rpc/rpc-id.js';
import { jsonNumberText } from '../support/json-text.js';

const ws = fc.constantFrom('', '', '', ' ', '\n', '\t', '\r\n  ');
const jsonNumber = jsonNumberText;
/** Any JSON string literal (escapes of every kind), or one as plain as the shortcut takes. */
const anyString = fc.string({ maxLength: 8 }).map((s) => JSON.stringify(s));
const plainString = fc.stringMatching(/^[a-zA-Z0-9_ .:-]{0,12}$/).map((s) => `"${s}"`);
const hex = fc.uint8Array({ minLength: 0, maxLength: 40 }).map((b) => `"0x${Buffer.from(b).toString('hex')}"`);
const value = fc.oneof(
  jsonNumber,
  anyString,
  plainString,
  fc.constantFrom('null', 'true', 'false', '{}', '[]', '{"id":1}', '[1,2]', '1e400', '-', '01', '1.', '.5', '"a\\u0041"', '"\t"'),
);
const params = fc.oneof(
  fc.array(fc.oneof(hex, plainString), { maxLength: 3 }).chain((xs) => ws.map((w) => `[${w}${xs.join(`${w},${w}`)}${w}]`)),
  fc.array(value, { maxLength: 3 }).map((xs) => `[${xs.join(',')}]`),
  value,
);
const member = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('"2.0"', '"2.0"', '"1.0"', '2', '"2.0 "').map((v) => ['jsonrpc', v] as const) },
  { weight: 4, arbitrary: fc.oneof(jsonNumber, plainString, value).map((v) => ['id', v] as const) },
  {
    weight: 4,
    arbitrary: fc
      .oneof(fc.constantFrom('"eth_chainId"', '"eth_sendRawTransaction"', '"eth_sendRawTransactionSync"', '"eth_chainIdx"'), plainString, value)
      .map((v) => ['method', v] as const),
  },
  { weight: 3, arbitrary: params.map((v) => ['params', v] as const) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('x', 'ID', '\\u0069d', 'i\\"d', 'jsonrpc ', 'param'), value) },
);
/** A body: members (duplicates possible) in any order, with whitespace anywhere JSON allows. */
const body = fc
  .tuple(fc.array(member, { minLength: 0, maxLength: 6 }), ws, ws, ws)
  .map(([ms, a, b, c]) => `${a}{${b}${ms.map(([k, v]) => `"${k}"${a}:${c}${v}`).join(`${b},${c}`)}${c}}${a}`);
/** Canonical bodies: every member once, in a random order. */
const canonical = fc
  .tuple(
    fc.oneof(jsonNumber, plainString),
    fc.constantFrom('"eth_chainId"', '"eth_sendRawTransaction"', '"eth_sendRawTransactionSync"', '"eth_blockNumber"'),
    fc.option(params, { nil: undefined }),
    fc.nat(23),
  )
  .map(([id, method, p, order]) => {
    const ms = [`"jsonrpc":"2.0"`, `"id":${id}`, `"method":${method}`, ...(p === undefined ? [] : [`"params":${p}`])];
    // one of the orders of the members, picked by `order`
    const out: string[] = [];
    let k = order;
    while (ms.length > 0) {
      out.push(ms.splice(k % ms.length, 1)[0]!);
      k = Math.floor(k / 2);
    }
    return `{${out.join(',')}}`;
  });
/** The conditional send in viem's layout: the hex, then options of any text (objects, and what only looks like one). */
const objectText = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })).map((o) => JSON.stringify(o)),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })).map((o) => JSON.stringify(o, null, 1)),
  fc.constantFrom('{}', '{}, {}', '{"a":1},{"b":2}', '{"a":}', '{"a":"x\ny"}', '{"a":"]}"}', '{"a":1} ', '{"__proto__":{"x":1}}', '{"a":1,"a":2}'),
);
const conditional = fc
  .tuple(fc.oneof(jsonNumber, plainString), hex, objectText)
  .map(([id, h, o]) => `{"jsonrpc":"2.0","id":${id},"method":"eth_sendRawTransactionConditional","params":[${h},${o}]}`);
/** A body with a character inserted, removed or replaced somewhere. */
const mutated = fc
  .tuple(
    fc.oneof(canonical, body, conditional),
    fc.nat(),
    fc.constantFrom('', '"', '\\', ',', '}', '{', ' ', '0', 'e', '\u0000', '\u00e9', ':', '[', ']'),
    fc.nat(2),
  )
  .map(([t, at, c, op]) => {
    const i = at % (t.length + 1);
    return op === 0 ? t.slice(0, i) + c + t.slice(i) : op === 1 ? t.slice(0, i) + t.slice(i + 1) : t.slice(0, i) + c + t.slice(i + 1);
  });

/** The shortcut's answer equals the JSON.parse path's wherever it gives one. */
function agrees(text: string): boolean {
  const fast = scanRequest(text);
  if (fast === undefined) return false;
  const slow = readRequest(text);
  assert.ok(!('exit' in slow), `the shortcut read ${JSON.stringify(text)}, which the JSON.parse path refuses (${'exit' in slow ? slow.exit.reason : ''})`);
  const { paramsHex, ...read } = fast;
  assert.deepEqual({ ...read, paramsHex: false }, slow, JSON.stringify(text));
  // What it claims of the params is true: the route stage checks only their length then.
  if (paramsHex)
    assert.ok(
      slow.params.every((p) => typeof p === 'string' && /^0[xX][0-9a-fA-F]*$/.test(p)),
      JSON.stringify(text),
    );
  assert.ok(Object.is(fast.id, slow.id), `id ${String(fast.id)} vs ${String(slow.id)}`);
  assert.equal(idJsonOfText(text), fast.idJson);
  return true;
}

describe('rpc-scan: the envelope read without JSON.parse', () => {
  it('agrees with the JSON.parse path on generated bodies and their mutations (property)', () => {
    let taken = 0;
    fc.assert(
      fc.property(fc.oneof(body, canonical, mutated, conditional), (text) => {
        if (agrees(text)) taken++;
      }),
      { numRuns: 20_000 },
    );
    assert.ok(taken > 2_000, `the shortcut answered only ${taken} times`);
  });

  it('reads what clients send (viem, ethers, a sync send), and gives the interned method names', () => {
    const tx = `0x02f8${'ab'.repeat(100)}`;
    for (const text of [
      '{"jsonrpc":"2.0","id":0,"method":"eth_chainId"}',
      '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      `{"jsonrpc":"2.0","id":7,"method":"eth_sendRawTransaction","params":["${tx}"]}`,
      `{"method":"eth_sendRawTransaction","params":["${tx}"],"id":42,"jsonrpc":"2.0"}`,
      `{"jsonrpc":"2.0","id":"req-9","method":"eth_sendRawTransactionSync","params":["${tx}"]}`,
      ' {\n  "jsonrpc" : "2.0" ,\n  "id" : 1.0e0 ,\n  "method" : "eth_chainId"\n}\n',
      `{"jsonrpc":"2.0","id":3,"method":"eth_sendRawTransactionConditional","params":["${tx}",{}]}`,
      `{"jsonrpc":"2.0","id":4,"method":"eth_sendRawTransactionConditional","params":["${tx}",{"knownAccounts":{"0x${'11'.repeat(20)}":"0x${'22'.repeat(32)}"},"blockNumberMax":"0x10"}]}`,
    ]) {
      assert.ok(agrees(text), `not read by the shortcut: ${text}`);
    }
    const sent = scanRequest(`{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["${tx}"]}`)!;
    assert.equal(sent.params[0], tx);
    assert.equal(sent.method, 'eth_sendRawTransaction');
    assert.equal(sent.paramsHex, true, 'a raw transaction is found as hex');
    assert.equal(scanRequest('{"jsonrpc":"2.0","id":1,"method":"m","params":["0x12","zz"]}')!.paramsHex, false);
  });

  it('leaves to JSON.parse what it does not read exactly', () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}', // duplicate: JSON.parse keeps the last
      '{"jsonrpc":"2.0","\\u0069d":1,"method":"m"}', // a key spelt with an escape
      '{"jsonrpc":"2.0","id":"a\\"b","method":"m"}', // an escape in a string
      '{"jsonrpc":"2.0","id":1,"method":"m","params":[5000]}', // a number param
      '{"jsonrpc":"2.0","id":1,"method":"m","extra":true}', // another member
      '{"jsonrpc":"2.0","id":null,"method":"m"}', // refused there, with its own message
      '{"jsonrpc":"2.0","id":1e400,"method":"m"}', // Infinity: refused there
      '{"jsonrpc":"2.0","id":1,"method":"m"} x', // trailing text
      '[{"jsonrpc":"2.0","id":1,"method":"m"}]', // a batch
      '{"jsonrpc":"2.0","id":1,"method":"a\tb"}', // a control character: a parse error there
    ])
      assert.equal(scanRequest(text), undefined, text);
  });
});
