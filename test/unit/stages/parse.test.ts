/** The parse stage: one JSON-RPC 2.0 object, its id kept as the client wrote it. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createParseStage } from '../../../src/stages/parse.js';
import { idLiteral } from '../../../src/rpc/rpc-id.js';
import { given, passed, reason } from '../../support/stage-context.js';

describe('parse stage', () => {
  const stage = createParseStage();
  const p = (text: string, json = true) => given({ body: { text, bytes: Buffer.byteLength(text) } }, { head: { json } }).run(stage);
  it('accepts one JSON-RPC 2.0 object and records the id as JSON', () => {
    const c = passed(p('{"jsonrpc":"2.0","id":"x\\"y","method":"m","params":[1]}'));
    assert.deepEqual(c.rpc, { id: 'x"y', idJson: '"x\\"y"', method: 'm', params: [1], paramsHex: false });
    assert.equal(c.idJson, '"x\\"y"', 'the id every later answer echoes');
  });
  it('refuses the rest with its reason', () => {
    assert.equal(reason(p('[]')), 'batch_not_supported');
    assert.equal(reason(p('{')), 'parse_error');
    assert.equal(reason(p('null')), 'invalid_request');
    assert.equal(reason(p('{"jsonrpc":"2.0","id":true,"method":"m","params":[]}')), 'invalid_request');
    assert.equal(reason(p('{"jsonrpc":"2.0","id":1,"method":"m","params":[]}', false)), 'unsupported_content_type');
    assert.equal(reason(p('{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}')), 'invalid_request');
  });
  it('echoes a number id a double cannot hold exactly as the client wrote it', () => {
    const idOf = (body: string) => passed(p(body)).rpc.idJson;
    assert.equal(idOf('{"jsonrpc":"2.0","id":12345678901234567890,"method":"m","params":[]}'), '12345678901234567890');
    assert.equal(idOf('{"jsonrpc":"2.0","id":1.50,"method":"m","params":[]}'), '1.50');
    assert.equal(idOf('{"jsonrpc":"2.0","id":7,"method":"m","params":[]}'), '7'); // the common case stays JSON.stringify
  });
});

describe('idLiteral (the source text of the top-level id)', () => {
  const big = '18446744073709551615';
  it('finds the top-level member only, the last of duplicates, through escapes and whitespace', () => {
    assert.equal(idLiteral(`{"params":[{"id":1}],"x":{"id":2,"s":"}"},"id":${big},"method":"m"}`), big);
    assert.equal(idLiteral(`{"method":"\\"id\\":5","id":${big}}`), big);
    assert.equal(idLiteral(`{"id":1,"id":${big}}`), big);
    assert.equal(idLiteral(`{"\\u0069d":${big}}`), big);
    assert.equal(idLiteral(` {\n "id" :\t${big} ,"x":[1,{"a":"\\\\"}]}`), big);
    assert.equal(idLiteral('{"jsonrpc":"2.0","method":"m"}'), undefined);
  });
  it('agrees with JSON.parse on random objects (property)', () => {
    const key = fc.oneof(fc.constantFrom('jsonrpc', 'method', 'params', 'idx', 'Id', 'i\\d'), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(key, fc.jsonValue({ maxDepth: 3 })), { maxLength: 6 }),
        fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
        fc.nat(),
        (members, id, at) => {
          const parts = members.filter(([k]) => k !== 'id').map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
          parts.splice(at % (parts.length + 1), 0, `"id":${id}`);
          const text = `{${parts.join(',')}}`;
          assert.equal(typeof (JSON.parse(text) as { id: unknown }).id, 'number');
          assert.equal(idLiteral(text), String(id));
        },
      ),
      { numRuns: 500 },
    );
  });
});
