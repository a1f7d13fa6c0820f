/**
 * What the pipeline does for every front end (src/pipeline/pipeline.ts): it samples its requests
 * into the per-stage series itself (1 in STAGE_SAMPLE_MASK + 1, or every one with timeEvery), and
 * gathers an answer's headers: the Exit's own, those a stage adds (Stage.headers), Server-Timing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Exit, type Header, REJECT, result } from '../../src/base/errors.js';
import { type BaseCtx, RequestContext } from '../../src/pipeline/context.js';
import { Pipeline, type PipelineHooks, STAGE_SAMPLE_MASK, type Stage } from '../../src/pipeline/pipeline.js';

const head = { host: 'localhost', json: true, declaredBytes: 2, apiKey: '' };
const ctx = () => new RequestContext('t', 0, head, { read: () => Promise.resolve({ text: '{}', bytes: 2 }) });
const text = (h: readonly Header[] | undefined) => (h ?? []).map(([k, v]) => `${String(k)}: ${typeof v === 'string' ? v : Buffer.from(v).toString()}`);

/** A stage that passes the context on, adding a header to any answer once it ran. */
function marking(name: string): Stage<BaseCtx, object> {
  return {
    name,
    adds: null,
    reasons: [],
    run: (c) => (((c as unknown as Record<string, boolean>)[name] = true), c),
    headers: (c) => ((c as unknown as Record<string, boolean>)[name] === true ? [[`x-${name}`, 'ran']] : undefined),
  };
}

describe('the pipeline owns what every front end needs', () => {
  it('samples 1 request in STAGE_SAMPLE_MASK + 1 into the per-stage series, with no code in the front end', () => {
    const seen: string[] = [];
    const named: string[][] = [];
    const hooks: PipelineHooks = { exit: () => {}, observer: { stage: (name) => seen.push(name), stages: (names) => named.push([...names]) } };
    const p = new Pipeline([marking('a'), { name: 'end', reasons: ['ok'], run: () => result('0x1') }], hooks);
    assert.deepEqual(named, [['a', 'end']], 'the series are named when the pipeline is built');
    const runs = 3 * (STAGE_SAMPLE_MASK + 1);
    for (let i = 0; i < runs; i++) p.run(ctx());
    assert.deepEqual(seen, ['a', 'end', 'a', 'end', 'a', 'end']);
  });

  it('without an observer nothing is timed; with timeEvery every request, its times kept for Server-Timing', () => {
    const untimed = new Pipeline([marking('a'), { name: 'end', reasons: ['ok'], run: () => result('0x1') }], { exit: () => {} });
    const c = ctx();
    untimed.run(c);
    assert.equal(c.timed, false);
    assert.equal(c.timings, null);
    let last: BaseCtx | null = null;
    const every = new Pipeline([marking('a'), { name: 'end', reasons: ['ok'], run: () => result('0x1') }], {
      exit: (x) => (last = x),
      timeEvery: true,
    });
    every.run(ctx());
    assert.ok(last !== null && (last as BaseCtx).timings !== null);
    const h = text(every.headers(last!, result('0x1')));
    assert.equal(h.length, 2);
    assert.match(h[1]!, /^server-timing: (a;dur=[0-9.]+, )?(end;dur=[0-9.]+)?$/);
  });

  it("an answer's headers: the Exit's own, then each stage's that ran, in stage order, whichever stage answered", () => {
    const exits: { c: BaseCtx; e: Exit }[] = [];
    const hooks: PipelineHooks = { exit: (c, e) => exits.push({ c, e }) };
    const refuse: Stage<BaseCtx, object> = { name: 'refuse', adds: null, reasons: ['overloaded'], run: () => REJECT.overloaded };
    const p = new Pipeline([marking('a'), marking('b'), refuse, marking('c'), { name: 'end', reasons: ['ok'], run: () => result('0x1') }], hooks);
    p.run(ctx());
    const { c, e } = exits[0]!;
    assert.deepEqual(text(p.headers(c, e)), [...text(e.headers), 'x-a: ran', 'x-b: ran']);
    const fresh = ctx();
    assert.deepEqual(text(p.headers(fresh, REJECT.parse_error)), text(REJECT.parse_error.headers), "no stage ran: the Exit's own only");
  });
});
