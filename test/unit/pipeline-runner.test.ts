/**
 * The runner: order, first rejection short-circuits, sync stages are not awaited, a Later resumes
 * synchronously, client gone stops.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Exit, REJECT, result, FAIL } from '../../src/base/errors.js';
import { RequestContext, type BaseCtx } from '../../src/pipeline/context.js';
import { Later } from '../../src/pipeline/later.js';
import { Pipeline, PipelineBuilder, type PipelineHooks, type Stage } from '../../src/pipeline/pipeline.js';
import { createApp } from '../../src/app.js';
import { admissionStages } from '../../src/stages/list.js';
import { FileAccountStore } from '../../src/accounts/file-store.js';
import { HostTable } from '../../src/config/chains.js';
import { RateLimiter } from '../../src/limits/rate-limiter.js';
import { createAuthStage } from '../../src/stages/auth.js';
import { createGrantStage } from '../../src/stages/grant.js';
import { createHostStage } from '../../src/stages/host.js';
import { createRouteStage } from '../../src/stages/route.js';
import { createParseStage } from '../../src/stages/parse.js';
import { createSizeCapStage } from '../../src/stages/size-cap.js';
import { parseConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/log.js';
import { Writable } from 'node:stream';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const silent = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const head = { host: 'localhost', json: true, declaredBytes: 2, apiKey: '' };
const ctx = () => new RequestContext('t', 0, head, { read: () => Promise.resolve({ text: '{}', bytes: 2 }) });

function recorder() {
  const exits: { exit: Exit; stage: string; err: unknown }[] = [];
  return { exits, hooks: { exit: (_c: BaseCtx, exit: Exit, stage: string, err: unknown) => exits.push({ exit, stage, err }) } };
}

const pass = (name: string, trace: string[]): Stage<BaseCtx, object> => ({ name, adds: null, reasons: [], run: (c) => (trace.push(name), c) });

describe('pipeline runner', () => {
  it('runs stages in array order and ends with the terminal answer', () => {
    const trace: string[] = [];
    const { exits, hooks } = recorder();
    const p = new Pipeline([pass('a', trace), pass('b', trace), { name: 'forward', reasons: ['ok'], run: () => (trace.push('end'), result('0x1')) }], hooks);
    p.run(ctx());
    assert.deepEqual(trace, ['a', 'b', 'end']);
    assert.equal(exits.length, 1);
    assert.equal(exits[0]!.exit.reason, 'ok');
    assert.equal(exits[0]!.stage, 'forward'); // the third stage, by name
  });

  it('a rejection short-circuits: later stages never run, exit called once', () => {
    const trace: string[] = [];
    const { exits, hooks } = recorder();
    const p = new Pipeline([pass('a', trace), { name: 'parse', reasons: ['parse_error'], run: () => REJECT.parse_error }, pass('c', trace)], hooks);
    p.run(ctx());
    assert.deepEqual(trace, ['a']);
    assert.equal(exits.length, 1);
    assert.equal(exits[0]!.exit, REJECT.parse_error);
    assert.equal(exits[0]!.stage, 'parse'); // the second stage, by name
  });

  it('synchronous stages are not awaited: an all-sync pipeline answers before run() returns', () => {
    const { exits, hooks } = recorder();
    new Pipeline([pass('a', []), { name: 'route', reasons: ['ok'], run: () => result('0x1237') }], hooks).run(ctx());
    assert.equal(exits.length, 1);
  });

  it('awaits a stage that returns a promise, then continues', async () => {
    const trace: string[] = [];
    const { exits, hooks } = recorder();
    const p = new Pipeline(
      [
        { name: 'size_cap', reasons: [], run: (c: BaseCtx) => Promise.resolve(c).then((x) => (trace.push('async'), x)) },
        pass('b', trace),
        { name: 'forward', reasons: ['ok'], run: () => result('0x2') },
      ],
      hooks,
    );
    p.run(ctx());
    assert.equal(exits.length, 0);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(trace, ['async', 'b']);
    assert.equal(exits.length, 1);
  });

  it('waits on a Later and continues synchronously, in the call that settles it', () => {
    const trace: string[] = [];
    const { exits, hooks } = recorder();
    const later = new Later<BaseCtx>();
    const p = new Pipeline(
      [{ name: 'size_cap', reasons: [], run: () => later }, pass('b', trace), { name: 'forward', reasons: ['ok'], run: () => result('0x3') }],
      hooks,
    );
    const c = ctx();
    p.run(c);
    assert.equal(exits.length, 0, 'waiting');
    later.settle(c);
    assert.deepEqual(trace, ['b'], 'no microtask hop: the next stages ran inside settle()');
    assert.equal(exits.length, 1);
    assert.equal(exits[0]!.exit.reason, 'ok');
    later.settle(c);
    assert.equal(exits.length, 1, 'a second settle is ignored');
  });

  it('a Later stops when the client has gone, and maps like a promise', async () => {
    const { exits, hooks } = recorder();
    const later = new Later<number>();
    const c = ctx();
    const p = new Pipeline(
      [
        { name: 'size_cap', reasons: [], run: () => later.then(() => c) },
        { name: 'forward', reasons: ['ok'], run: () => result('0x4') },
      ],
      hooks,
    );
    p.run(c);
    c.aborted = true;
    later.settle(1);
    assert.equal(exits[0]!.exit, FAIL.client_closed);
    const settled = new Later<string>();
    settled.settle('x');
    assert.equal(await settled.then((v) => v + 'y'), 'xy', 'await works on a Later');
    assert.throws(() => settled.then(() => Promise.resolve(1)), /returned a promise/);
  });

  it('stops when the client has gone during an await', async () => {
    const trace: string[] = [];
    const { exits, hooks } = recorder();
    const c = ctx();
    const p = new Pipeline([{ name: 'size_cap', reasons: [], run: (x: BaseCtx) => Promise.resolve(x) }, pass('never', trace)], hooks);
    p.run(c);
    c.aborted = true;
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(trace, []);
    assert.equal(exits[0]!.exit, FAIL.client_closed);
  });

  it('a throwing stage becomes internal_error, with the cause for the log', () => {
    const { exits, hooks } = recorder();
    new Pipeline(
      [
        {
          name: 'auth',
          reasons: [],
          run: () => {
            throw new Error('boom');
          },
        },
      ],
      hooks,
    ).run(ctx());
    assert.equal(exits[0]!.exit, FAIL.internal_error);
    assert.equal((exits[0]!.err as Error).message, 'boom');
  });

  it('timed or not (the compiled run and the timing loop), the same exits; a last stage that passes the context on, at once or after a wait, is internal_error once', async () => {
    for (const timed of [false, true]) {
      const timings: string[] = [];
      const { exits, hooks } = recorder();
      // Timed: every request, by the pipeline (timeEvery), each stage's time to the observer.
      const all: PipelineHooks = { ...hooks, ...(timed ? { timeEvery: true, observer: { stage: (name: string) => timings.push(name) } } : {}) };
      const trace: string[] = [];
      const later: Stage<BaseCtx, object> = {
        name: 'wait',
        adds: null,
        reasons: [],
        run: (c) => {
          const l = new Later<typeof c>();
          setImmediate(() => l.settle(c));
          return l;
        },
      };
      const mk = () => ctx();
      new Pipeline([pass('a', trace), pass('b', trace)], all).run(mk());
      new Pipeline([pass('a', trace), later], all).run(mk());
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(
        exits.map((e) => [e.exit.reason, e.stage, (e.err as Error).message]),
        [
          ['internal_error', 'b', 'pipeline ended without an answer'],
          ['internal_error', 'wait', 'pipeline ended without an answer'],
        ],
        timed ? 'timed' : 'untimed',
      );
      assert.deepEqual(timings, timed ? ['a', 'b', 'a', 'wait'] : []);
    }
  });

  it('Later.onWith / thenWith pass their arguments beside the value, before and after it settles, one callback only', () => {
    const seen: unknown[] = [];
    const early = new Later<number>();
    early.onWith((v, a: string, b: number) => seen.push([v, a, b]), 'a', 2);
    assert.throws(() => early.onWith(() => undefined, 0, 0), /one callback only/);
    early.settle(1);
    const late = new Later<number>();
    late.settle(3);
    late.onWith((v, a: string, b: number) => seen.push([v, a, b]), 'c', 4);
    const mapped = new Later<number>();
    const out = mapped.thenWith((v, a: number) => v * a, 10);
    mapped.settle(5);
    out.on((v) => seen.push(v));
    assert.deepEqual(seen, [[1, 'a', 2], [3, 'c', 4], 50]);
  });

  it('Later.mapWith maps the value in place (no second Later) before any callback gets it, settled or not', async () => {
    const seen: unknown[] = [];
    const body = new Later<number>();
    const mapped = body.mapWith((v, a: number) => v * a, 3);
    assert.equal(mapped as unknown, body, 'the same Later');
    assert.throws(() => body.mapWith((v) => v, 0), /one callback only/);
    mapped.onWith((v, a: string) => seen.push([v, a]), 'x', 0);
    body.settle(2);
    body.settle(5); // settles once
    const early = new Later<number>();
    early.settle(4);
    assert.equal(await early.mapWith((v, a: number) => v + a, 1), 5, 'a settled one maps at once');
    const awaited = new Later<number>();
    const text = awaited.mapWith((v, a: string) => a + v, 'n');
    setImmediate(() => awaited.settle(1));
    assert.equal(await text, 'n1', 'await sees the mapped value');
    assert.deepEqual(seen, [[6, 'x']]);
  });

  it('the builder produces the stages in the order given', () => {
    const { hooks } = recorder();
    const p = PipelineBuilder.start<BaseCtx>()
      .add(pass('host', []))
      .add(pass('size_cap', []))
      .end({ name: 'forward', reasons: ['ok'], run: () => result('0x') }, hooks);
    assert.deepEqual(p.names, ['host', 'size_cap', 'forward']);
  });

  it('a stage that reads a field no stage before it added does not compile', () => {
    const host = createHostStage(new HostTable([]));
    const grant = createGrantStage();
    // The grant stage reads `account`, which only the auth stage adds.
    // @ts-expect-error: a compile error is the assertion (tsc fails on an unused directive)
    PipelineBuilder.start<BaseCtx>().add(host).add(grant);
    const right = PipelineBuilder.start<BaseCtx>()
      .add(host)
      .add(createSizeCapStage({ maxBodyBytes: 1024, chainIdMaxBodyBytes: 512 }, new FileAccountStore({ file: '/nonexistent', log: silent })))
      .add(createParseStage())
      .add(createRouteStage({ chainIdMaxBodyBytes: 512 }))
      .add(createAuthStage(new FileAccountStore({ file: '/nonexistent', log: silent })))
      .add(grant);
    const { hooks } = recorder();
    assert.deepEqual(right.end({ name: 'forward', reasons: ['ok'], run: () => result('0x') }, hooks).fields, [
      'chain',
      'body',
      'rpc',
      'rawTx',
      'send',
      'statusOf',
      'account',
      'grant',
    ]);
  });

  it('every context is created with the fields of every stage, in order, before any stage runs', () => {
    const config = parseConfig({ chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }], workers: 1 }, '/tmp', {});
    const { hooks } = recorder();
    const p = admissionStages({
      config,
      hosts: new HostTable([]),
      store: new FileAccountStore({ file: '/nonexistent', log: silent }),
      decoders: new Map(),
      limiter: new RateLimiter(),
    }).end({ name: 'forward', reasons: ['ok'], run: () => result('0x') }, hooks);
    const known = ['chain', 'body', 'rpc', 'rawTx', 'send', 'account', 'grant', 'tx', 'fee', 'sender', 'quota'];
    assert.deepEqual(
      p.fields.filter((f) => known.includes(f)),
      known,
      'the fields of the stages, in their order',
    );
    const c = new RequestContext('t', 0, head, { read: () => Promise.resolve('aborted') }, p.initFields);
    assert.deepEqual(Object.keys(c), ['reqId', 't0', 'head', 'bodySource', 'aborted', 'idJson', 'timed', 'timings', ...p.fields]);
  });

  it('the service pipeline keeps the designed order: cheapest refusal first, the forward last', () => {
    const config = parseConfig({ chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }], workers: 1 }, '/tmp', {});
    const log = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
    const names = createApp({ config, log }).http.stageNames;
    // docs/design.md §3.3, pinned as the relative order of the stages it names (a stage added between
    // them keeps this true, one moved out of order breaks it): the host before the body is
    // read; every refusal that needs no key before auth; a status query answered just after the
    // grant, a conditional send's options checked before decode; nothing spends the rate limit
    // before the checks that refuse; the forward ends the pipeline.
    const designed = ['host', 'size_cap', 'parse', 'route', 'auth', 'grant', 'status', 'conditions', 'decode', 'fee', 'sender', 'rate_limit', 'forward'];
    assert.deepEqual(
      names.filter((n) => designed.includes(n)),
      designed,
    );
    assert.equal(names[0], 'host');
    assert.equal(names.at(-1), 'forward');
    assert.equal(names.at(-2), 'rate_limit', 'the token is spent by the last check, just before the forward');
    assert.equal(new Set(names).size, names.length, 'stage names are unique (metrics and logs key on them)');
  });

  it('with TXGATE_CHECK_REASONS (as the tests run), an Exit its stage does not declare fails loudly', () => {
    assert.ok(process.env.TXGATE_CHECK_REASONS, 'the test suite runs with the check on');
    const { exits, hooks } = recorder();
    const p = new Pipeline([{ name: 'host', reasons: ['misdirected_host'], run: () => REJECT.parse_error }], hooks);
    assert.throws(() => p.run(ctx()), /stage host gave parse_error, which it does not declare/);
    assert.equal(exits.length, 0);
    const q = new Pipeline([{ name: 'host', reasons: ['misdirected_host'], run: (c: BaseCtx) => ((c.idJson = '1'), REJECT.misdirected_host) }], hooks);
    assert.throws(() => q.run(ctx()), /the id was set before its stage/);
  });
});
