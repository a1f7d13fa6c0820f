/**
 * Stages and the runner. A stage *returns* its verdict: the enriched context (continue) or an
 * Exit (answer now). No next() onion, so no "next called twice". The runner is a plain loop
 * that waits only when a stage really returned a Later or a Promise, and stops when the client
 * has gone.
 */
import { Exit, REJECT } from '../errors.js';
import { fieldInitializer, type BaseCtx, type FieldInitializer } from './context.js';
import { Later } from './later.js';

import { STAGE_NAMES, type StageName } from '../stage-names.js';

export { STAGE_NAMES, type StageName };

/**
 * Per-stage timing for the metrics: the requests whose sequence number has these bits clear
 * (1 in 64), enough to fill the histograms quickly at these rates without timing every
 * request; every request when Server-Timing is on.
 */
export const STAGE_SAMPLE_MASK = 63;

/** A stage's verdict: now, or later (a Later on the hot path, or any Promise). */
export type StageResult<Out> = Out | Exit | PromiseLike<Out | Exit>;

/**
 * A stage reads the context fields of `In` and either answers (an Exit) or passes the context
 * on with the fields of `Add` set: one field, named by `adds` (null for a stage that only
 * checks). Its types live in its own file; the builder checks the order.
 */
export interface Stage<In extends BaseCtx, Add extends object> {
  readonly name: StageName;
  readonly adds: (keyof Add & string) | null;
  readonly run: <C extends In>(ctx: C) => StageResult<C & Add>;
  /**
   * Never set: it makes `In` contravariant, so that the builder refuses a stage placed where a
   * field it reads has not been added yet (generic `run` alone would not be checked for it).
   */
  readonly reads?: (ctx: In) => void;
}

/** The last stage never passes a context on: it always answers. */
export interface TerminalStage<In extends BaseCtx> {
  readonly name: StageName;
  readonly run: (ctx: In) => Exit | PromiseLike<Exit>;
}

/** What the runner holds: a stage of any context type (the builder checked their order). */
export interface RunnerStage {
  readonly name: StageName;
  readonly adds?: string | null;
  run(ctx: BaseCtx): unknown;
}

export interface PipelineHooks {
  /** Called once per request with the answer and the name of the stage that gave it. */
  exit(ctx: BaseCtx, exit: Exit, stage: StageName, error: unknown): void;
  /** Per-stage duration in ms, for requests whose context has `timed` set. */
  stage?(ctx: BaseCtx, stageIndex: number, ms: number): void;
}

/** What watches every answer (the metrics): told by the front end once the answer is written. */
export interface RequestObserver {
  /** Once per answered (or abandoned) request, after the response was written. */
  request(ctx: BaseCtx, exit: Exit, stage: StageName, micros: number): void;
  stage?(stage: number, ms: number): void;
}

export class Pipeline {
  readonly names: readonly StageName[];
  /** The context fields the stages add, in order: every context is created with them set. */
  readonly fields: readonly string[];
  /** Sets those fields on a new context (RequestContext's `init`). */
  readonly initFields: FieldInitializer;

  constructor(
    private readonly stages: readonly RunnerStage[],
    private readonly hooks: PipelineHooks,
  ) {
    this.names = stages.map((s) => s.name);
    this.fields = stages.flatMap((s) => (typeof s.adds === 'string' ? [s.adds] : []));
    this.initFields = fieldInitializer(this.fields);
  }

  /** Runs the stages from the first; `hooks.exit` is called exactly once. */
  run(ctx: BaseCtx): void {
    this.step(ctx, 0);
  }

  private step(ctx: BaseCtx, from: number): void {
    const { stages, hooks } = this;
    const timed = ctx.timed && hooks.stage !== undefined;
    for (let i = from; i < stages.length; i++) {
      const t = timed ? performance.now() : 0;
      let out: unknown;
      try {
        out = stages[i]!.run(ctx);
      } catch (e) {
        hooks.exit(ctx, REJECT.internal_error, this.names[i]!, e);
        return;
      }
      if (out instanceof Later) {
        // Continues synchronously when it settles (inside the uWS data callback for the body).
        (out as Later<unknown>).on((v) => {
          if (timed) hooks.stage!(ctx, i, performance.now() - t);
          this.resume(ctx, v, i);
        });
        return;
      }
      if (out instanceof Promise) {
        out.then(
          (v: unknown) => {
            if (timed) hooks.stage!(ctx, i, performance.now() - t);
            this.resume(ctx, v, i);
          },
          (e: unknown) => hooks.exit(ctx, REJECT.internal_error, this.names[i]!, e),
        );
        return;
      }
      if (timed) hooks.stage!(ctx, i, performance.now() - t);
      if (out instanceof Exit) {
        hooks.exit(ctx, out, this.names[i]!, undefined);
        return;
      }
      ctx = out as BaseCtx;
    }
    hooks.exit(ctx, REJECT.internal_error, this.names[stages.length - 1]!, new Error('pipeline ended without an answer'));
  }

  private resume(ctx: BaseCtx, v: unknown, i: number): void {
    if (v instanceof Exit) this.hooks.exit(ctx, v, this.names[i]!, undefined);
    else if (ctx.aborted) this.hooks.exit(ctx, REJECT.client_closed, this.names[i]!, undefined);
    else this.step(v as BaseCtx, i + 1);
  }
}

/**
 * Builds the stage array so that a wrong order is a compile error: each `then` takes a stage
 * whose fields read were all added by the stages before it.
 */
export class PipelineBuilder<Ctx extends BaseCtx> {
  private constructor(private readonly stages: readonly RunnerStage[]) {}

  static start<C extends BaseCtx>(): PipelineBuilder<C> {
    return new PipelineBuilder<C>([]);
  }

  then<Add extends object>(stage: Stage<Ctx, Add>): PipelineBuilder<Ctx & Add> {
    return new PipelineBuilder<Ctx & Add>([...this.stages, stage]);
  }

  end(stage: TerminalStage<Ctx>, hooks: PipelineHooks): Pipeline {
    return new Pipeline([...this.stages, stage], hooks);
  }
}

/** The context a builder's stages produce (what a terminal stage after them may read). */
export type BuiltContext<B> = B extends PipelineBuilder<infer C> ? C : never;
