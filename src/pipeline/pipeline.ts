/**
 * Stages and the runner. A stage *returns* its verdict: the enriched context (continue) or an
 * Exit (answer now). No next() onion, so no "next called twice". The runner is a plain loop
 * that waits only when a stage really returned a Later or a Promise, and stops when the client
 * has gone.
 */
import { Exit, REJECT } from '../errors.js';
import type { BaseCtx } from './context.js';
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

export interface Stage<In extends BaseCtx, Out extends In> {
  readonly name: StageName;
  run(ctx: In): StageResult<Out>;
}

/** The last stage never passes a context on: it always answers. */
export type TerminalStage<In extends BaseCtx> = Stage<In, never>;

// biome-ignore lint/suspicious/noExplicitAny: the array holds stages of every context type; the builder checks their order
type AnyStage = Stage<any, any>;

export interface PipelineHooks {
  /** Called once per request with the answer and the name of the stage that gave it. */
  exit(ctx: BaseCtx, exit: Exit, stage: StageName, error: unknown): void;
  /** Per-stage duration in ms, for requests whose context has `timed` set. */
  stage?(ctx: BaseCtx, stageIndex: number, ms: number): void;
}

export class Pipeline {
  readonly names: readonly StageName[];

  constructor(
    readonly stages: readonly AnyStage[],
    private readonly hooks: PipelineHooks,
  ) {
    this.names = stages.map((s) => s.name);
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
        out = (stages[i] as AnyStage).run(ctx);
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
 * whose input is the previous stage's output.
 */
export class PipelineBuilder<Ctx extends BaseCtx> {
  private constructor(private readonly stages: readonly AnyStage[]) {}

  static start<C extends BaseCtx>(): PipelineBuilder<C> {
    return new PipelineBuilder<C>([]);
  }

  then<Out extends Ctx>(stage: Stage<Ctx, Out>): PipelineBuilder<Out> {
    return new PipelineBuilder<Out>([...this.stages, stage]);
  }

  end(stage: TerminalStage<Ctx>, hooks: PipelineHooks): Pipeline {
    return new Pipeline([...this.stages, stage], hooks);
  }
}
