/** The reason table: consistent, preallocated, and documented row for row in the README. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REJECT, reject, statusLine } from '../src/errors.js';
import { REASON_NAMES, REASONS } from '../src/reasons.js';
import { RequestContext } from '../src/pipeline/context.js';
import { admissionStages } from '../src/stages/list.js';
import { createForwardStage } from '../src/stages/forward.js';
import { parseConfig } from '../src/config.js';
import { HostTable } from '../src/chains.js';
import { RateLimiter } from '../src/limits/rate-limiter.js';
import { createAuthStage } from '../src/stages/auth.js';

const README = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');

function readmeRows(): Map<string, { status: number; code: number }> {
  const block = README.slice(README.indexOf('<!-- reasons:start -->'), README.indexOf('<!-- reasons:end -->'));
  const rows = new Map<string, { status: number; code: number }>();
  for (const m of block.matchAll(/^\| `([a-z_]+)` \| (\d+) \| (-?\d+) \|/gm)) rows.set(m[1]!, { status: Number(m[2]), code: Number(m[3]) });
  return rows;
}

/** The README's "where" cell of each reason. */
function readmeWhere(): Map<string, string> {
  const block = README.slice(README.indexOf('<!-- reasons:start -->'), README.indexOf('<!-- reasons:end -->'));
  return new Map([...block.matchAll(/^\| `([a-z_]+)` \| \d+ \| -?\d+ \| ([^|]+) \|/gm)].map((m) => [m[1]!, m[2]!.trim()]));
}

describe('error table', () => {
  it('every reason has a README row with its status and code, and every README row is a reason', () => {
    const rows = readmeRows();
    assert.ok(rows.size > 0, 'the README reasons table was found');
    assert.deepEqual([...rows.keys()].sort(), [...REASON_NAMES].sort());
    for (const r of REASON_NAMES) assert.deepEqual(rows.get(r), { status: REASONS[r].status, code: REASONS[r].code }, r);
  });
  it('every stage of the pipeline is listed in the reasons table for exactly the reasons it declares', () => {
    const config = parseConfig({ chains: [{ chainId: 4663, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }], workers: 1 }, '/tmp', {});
    const store = { ready: true, stale: false, size: 0, byKeyHash: () => undefined, start: async () => {}, close: () => {} };
    const p = admissionStages({ config, hosts: new HostTable([]), store, decoders: new Map(), limiter: new RateLimiter() });
    const stages = [...p.stages, createForwardStage(new Map())];
    for (const s of stages) {
      const declared = s.reasons.filter((r) => r !== 'ok').sort();
      const listed = REASON_NAMES.filter((r) => (REASONS[r].stages as readonly string[]).includes(s.name)).sort();
      assert.deepEqual(declared, listed, `stage ${s.name}: declares ${declared.join(', ')}; the reasons table lists ${listed.join(', ')}`);
    }
    const names = new Set(stages.map((s) => s.name));
    for (const r of REASON_NAMES) for (const w of REASONS[r].stages) assert.ok(names.has(w) || w === 'front_end' || w === 'any', `${r}: ${w} is no stage`);
  });
  it('every README row\'s "where" names the stages the reasons table gives it', () => {
    const where = readmeWhere();
    const label = (w: string) => (w === 'front_end' ? 'front end' : w.replace('_', ' '));
    for (const r of REASON_NAMES) {
      const expected = REASONS[r].stages.map(label).join(' / ');
      assert.ok(where.get(r)?.startsWith(expected), `${r}: README says "${where.get(r)}", the table says "${expected}"`);
    }
  });
  it('reasons are snake_case and codes are JSON-RPC 2.0, EIP-1474 or EIP-7966', () => {
    const codes = new Set([-32700, -32600, -32601, -32602, -32603, -32000, -32002, -32003, -32005, 4]); // 4: EIP-7966's timeout
    for (const r of REASON_NAMES) {
      assert.match(r, /^[a-z]+(?:_[a-z]+)*$/);
      assert.ok(codes.has(REASONS[r].code), r);
    }
  });
  it('preallocated bodies are the DESIGN §5 shape, with the id spliced in', () => {
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
