/** The reason table: consistent, preallocated, and documented row for row in docs/clients.md (the stage table in docs/design.md). */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REJECT, reject, statusLine } from '../../src/base/errors.js';
import { REASON_NAMES, REASONS } from '../../src/base/reasons.js';
import { RequestContext } from '../../src/pipeline/context.js';
import { block, label, pipelineStages, renderReasons, renderStages } from '../../scripts/readme-tables.js';
import { createAuthStage } from '../../src/stages/auth.js';

const CLIENTS = readFileSync(join(import.meta.dirname, '../../../docs/clients.md'), 'utf8');
const DESIGN = readFileSync(join(import.meta.dirname, '../../../docs/design.md'), 'utf8');

describe('error table', () => {
  it("docs/clients.md's reasons table is the one rendered from the reasons table (npm run readme), a row per reason", () => {
    const table = block(CLIENTS, 'reasons');
    assert.equal(table, renderReasons(), 'docs/clients.md is out of date: run npm run readme');
    for (const r of REASON_NAMES) assert.ok(table.includes(`| \`${r}\` | ${REASONS[r].status} | ${REASONS[r].code} |`), r);
  });
  it("docs/design.md's stage table is the one rendered from the stage list, a row per stage in the pipeline's order", () => {
    const table = block(DESIGN, 'stages');
    assert.equal(table, renderStages(), 'docs/design.md is out of date: run npm run readme');
    const names = [...table.matchAll(/^\| ([a-z ]+) \|/gm)].map((m) => m[1]).filter((n) => n !== 'stage');
    assert.deepEqual(
      names,
      pipelineStages().map((s) => label(s.name)),
    );
  });
  it('every stage of the pipeline is listed in the reasons table for exactly the reasons it declares', () => {
    const stages = pipelineStages();
    for (const s of stages) {
      const declared = s.reasons.filter((r) => r !== 'ok').sort();
      const listed = REASON_NAMES.filter((r) => (REASONS[r].stages as readonly string[]).includes(s.name)).sort();
      assert.deepEqual(declared, listed, `stage ${s.name}: declares ${declared.join(', ')}; the reasons table lists ${listed.join(', ')}`);
    }
    const names = new Set(stages.map((s) => s.name));
    for (const r of REASON_NAMES) for (const w of REASONS[r].stages) assert.ok(names.has(w) || w === 'front_end' || w === 'any', `${r}: ${w} is no stage`);
  });
  it('reasons are snake_case and codes are JSON-RPC 2.0, EIP-1474 or EIP-7966', () => {
    const codes = new Set([-32700, -32600, -32601, -32602, -32603, -32000, -32002, -32003, -32005, 4]); // 4: EIP-7966's timeout
    for (const r of REASON_NAMES) {
      assert.match(r, /^[a-z]+(?:_[a-z]+)*$/);
      assert.ok(codes.has(REASONS[r].code), r);
    }
  });
  it('preallocated bodies are the docs/design.md §4.1 shape, with the id spliced in', () => {
    assert.deepEqual(JSON.parse(REJECT.parse_error.body('null')), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: REASONS.parse_error.message, data: { reason: 'parse_error' } },
    });
    assert.deepEqual(JSON.parse(REJECT.unauthorized.body('"a\\"b"')).id, 'a"b');
    assert.ok(Object.isFrozen(REJECT));
    const auth = createAuthStage({ ready: true, stale: false, size: 0, byKeyHash: () => undefined, start: async () => {}, close: () => {} });
    const ctx = (apiKey: string) =>
      new RequestContext('t', 0, { host: '', json: false, declaredBytes: -1, apiKey }, { read: () => Promise.resolve('aborted') });
    assert.equal(auth.run(ctx('one') as never), REJECT.unauthorized, 'the preallocated rejection itself: nothing allocated');
    assert.equal(auth.run(ctx('two') as never), REJECT.unauthorized);
    const custom = reject('invalid_transaction', 'Invalid transaction: nonce', { x: 1 });
    assert.deepEqual(JSON.parse(custom.body('7')).error, {
      code: -32000,
      message: 'Invalid transaction: nonce',
      data: { reason: 'invalid_transaction', x: 1 },
    });
  });
  it('no message mentions a key', () => {
    for (const r of REASON_NAMES) assert.doesNotMatch(REASONS[r].message, /txg_/);
  });
  it('status lines', () => {
    assert.equal(statusLine(421), '421 Misdirected Request');
    assert.equal(statusLine(413), '413 Payload Too Large');
  });
});
