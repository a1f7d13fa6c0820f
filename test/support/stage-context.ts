/**
 * Contexts for a stage's unit tests, built through the same builder the service uses: the fields
 * the stages before it would have added are given as a stage of their own (`given`), and the
 * stage under test is added after it, so a test that leaves out a field the stage reads, or
 * gives it the wrong type, does not compile (no `any`, nothing injected behind the types).
 */
import assert from 'node:assert/strict';
import { Exit } from '../../src/base/errors.js';
import { RequestContext, type BaseCtx, type BodyResult, type BodySource, type RequestHead } from '../../src/pipeline/context.js';
import { PipelineBuilder, type Stage, type StageResult } from '../../src/pipeline/pipeline.js';
import { result } from '../../src/base/errors.js';

export interface Front {
  readonly head?: Partial<RequestHead>;
  /** What the body reader gives (default: the empty body). */
  readonly read?: BodyResult;
  /** The body reader itself, where a test watches it. */
  readonly source?: BodySource;
}

const HEAD: RequestHead = { host: 'localhost', json: true, declaredBytes: -1, apiKey: '' };
const NO_HOOKS = { exit: () => {} };

/** A stage that sets fields the way the stages before a stage under test would have. */
function givenStage<F extends object>(fields: F): Stage<BaseCtx, F, 'given'> {
  return { name: 'given', adds: null, reasons: [], run: (ctx) => Object.assign(ctx, fields) };
}

/**
 * The context of a request that reached a stage with `fields` set, and the stage's verdict on
 * it: `given({ rpc, account, chain }).run(createGrantStage())` compiles only if the grant stage
 * reads nothing beyond those fields, each of its type.
 */
export function given<const F extends object>(fields: F, front: Front = {}) {
  return {
    run<Add extends object, N extends string>(stage: Stage<BaseCtx & F, Add, N>): StageResult<BaseCtx & F & Add> {
      const pipeline = PipelineBuilder.start<BaseCtx>()
        .add(givenStage(fields))
        .add(stage)
        .end({ name: 'end', reasons: ['ok'], run: () => result('0x') }, NO_HOOKS);
      const read = front.read ?? { text: '', bytes: 0 };
      const source = front.source ?? { read: () => Promise.resolve(read) };
      const ctx = new RequestContext('t', 0, { ...HEAD, ...front.head }, source, pipeline.initFields);
      return stage.run(Object.assign(ctx, fields) as BaseCtx & F);
    },
  };
}

/** The reason of a verdict ('pass' when the stage passed the context on). */
export const reason = (v: unknown): string => (v instanceof Exit ? v.reason : 'pass');

/** The context a stage passed on, under its type (fails the test on an Exit or a pending verdict). */
export function passed<C>(v: StageResult<C>): C {
  assert.ok(!(v instanceof Exit), `expected to pass, got ${(v as Exit).reason}`);
  assert.ok(!isThenable(v), 'expected a verdict now, got a pending one');
  return v as C;
}

/** The verdict of a stage that may answer later (the body read). */
export async function settled<C>(v: StageResult<C>): Promise<C | Exit> {
  return await v;
}

function isThenable(v: unknown): boolean {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}
