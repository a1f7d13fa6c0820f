/**
 * Stages and the runner. A stage *returns* its verdict: the enriched context (continue) or an
 * Exit (answer now). No next() onion, so no "next called twice". The runner is straight-line
 * code compiled once for the stage list (`compiled`, below); it waits only when a stage really
 * returned a Later or a Promise, and stops when the client has gone. What every front end needs
 * of a run is the runner's: the sampled per-stage timing (for every front end's requests) and
 * the answer's headers, which a stage may contribute (`Stage.headers`).
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import { Exit, type Header, FAIL } from '../base/errors.js';
import type { ExitLabel } from '../base/reasons.js';
import { fieldInitializer, type BaseCtx, type FieldInitializer } from './context.js';
import { Later } from './later.js';
import { compiled } from './compiled.js';
import { probed } from './probes.js';
import { checkedHooks } from './checked-hooks.js';
import { serverTiming } from './server-timing.js';

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
 * checks; the route stage's two, the param and the kind of send, are named together). Its types live in its own file; the builder checks the order.
 */
export interface Stage<In extends BaseCtx, Add extends object, Name extends string = string> {
  readonly name: Name;
  /** What it checks, in a line (the stage table of docs/design.md is rendered from it). */
  readonly about?: string;
  /** The field it sets (the route stage sets two: the param and the kind of send, read together). */
  readonly adds: (keyof Add & string) | readonly (keyof Add & string)[] | null;
  /**
   * The reasons of the Exits it may return (beside client_closed and internal_error, which any
   * point may give): the reasons table lists exactly these for it, and with TXGATE_CHECK_REASONS
   * set the runner refuses any other (the test suite runs so).
   */
  readonly reasons: readonly ExitLabel[];
  /** Sets the id echoed in every answer from here on (BaseCtx.idJson): the parse stage. */
  readonly setsId?: true;
  readonly run: <C extends In>(ctx: C) => StageResult<C & Add>;
  /**
   * Headers it adds to the answer, whichever stage gave it (the rate-limit stage's quota), read
   * by a front end whose answers carry headers (Pipeline.headers); its fields are set only where
   * it ran.
   */
  readonly headers?: (ctx: BaseCtx & Partial<In & Add>, exit: Exit) => readonly Header[] | undefined;
  /**
   * Never set: it makes `In` contravariant, so that the builder refuses a stage placed where a
   * field it reads has not been added yet (generic `run` alone would not be checked for it).
   */
  readonly reads?: (ctx: In) => void;
}

/** The last stage never passes a context on: it always answers. */
export interface TerminalStage<In extends BaseCtx, Name extends string = string> {
  readonly name: Name;
  readonly about?: string;
  readonly reasons: readonly ExitLabel[];
  readonly run: (ctx: In) => Exit | PromiseLike<Exit>;
}

/** What the runner holds: a stage of any context type (the builder checked their order). */
export interface RunnerStage {
  readonly name: string;
  readonly about?: string;
  readonly adds?: string | readonly string[] | null;
  readonly reasons: readonly ExitLabel[];
  readonly setsId?: true;
  run(ctx: BaseCtx): unknown;
  headers?(ctx: BaseCtx, exit: Exit): readonly Header[] | undefined;
}

/** What a front end hands the pipeline it runs. */
export interface PipelineHooks {
  /** Called once per request with the answer and the name of the stage that gave it. */
  exit(ctx: BaseCtx, exit: Exit, stage: string, error: unknown): void;
  /**
   * The answer path threw after a wait (the pipeline resumed from a Later or a promise, in the
   * stack of whoever settled it: the body's reader, a send): said, and answered where nothing
   * was (the front end's). Absent: a process warning. The settler never sees the throw.
   */
  readonly failed?: ((ctx: BaseCtx, e: unknown) => void) | undefined;
  /** The per-stage metrics of the front end's requests: 1 request in STAGE_SAMPLE_MASK + 1 is timed (every one with `timeEvery`). */
  readonly observer?: StageObserver | undefined;
  /** Time every request and keep its stages' times for the Server-Timing header (`profiling.serverTiming`). */
  readonly timeEvery?: boolean | undefined;
}

/** The per-stage series: told each timed stage's duration by the pipeline. */
export interface StageObserver {
  /** A timed stage's duration, by the stage's name. */
  stage?(stage: string, ms: number): void;
  /** The pipeline's stage names, once it is built (so per-stage series exist before a sample). */
  stages?(names: readonly string[]): void;
}

/** What watches every answer (the metrics): told by the front end once the answer is written. */
export interface RequestObserver extends StageObserver {
  /** Once per answered (or abandoned) request, after the response was written. */
  request(ctx: BaseCtx, exit: Exit, stage: string, micros: number): void;
}

export class Pipeline {
  readonly names: readonly string[];
  /** The context fields the stages add, in order: every context is created with them set. */
  readonly fields: readonly string[];
  /** Sets those fields on a new context (RequestContext's `init`). */
  readonly initFields: FieldInitializer;

  private readonly hooks: PipelineHooks;
  /** Requests run, for the sample: one in `timeMask + 1` is timed (-1: none, 0: every one). */
  private seq = 0;
  private readonly timeMask: number;
  private readonly observer: StageObserver | undefined;
  /** The headers the stages add to an answer, as one function (null: no stage adds any). */
  private readonly stageHeaders: ((ctx: BaseCtx, exit: Exit) => readonly Header[] | undefined) | null;

  private readonly stages: readonly RunnerStage[];

  constructor(given: readonly RunnerStage[], hooks: PipelineHooks) {
    // The profiler's probes (probes.ts), where TXGATE_STAGE_PROBES names them: else as given.
    const { stages, exit } = probed(given, hooks.exit);
    this.stages = stages;
    if (exit !== hooks.exit) hooks = { ...hooks, exit };
    this.names = stages.map((s) => s.name);
    this.hooks = process.env.TXGATE_CHECK_REASONS ? checkedHooks(stages, hooks) : hooks;
    this.fields = stages.flatMap((s) => (typeof s.adds === 'string' ? [s.adds] : (s.adds ?? [])));
    this.initFields = fieldInitializer(this.fields);
    this.fast = compiled(stages, this);
    this.observer = hooks.observer?.stage !== undefined ? hooks.observer : undefined;
    this.timeMask = hooks.timeEvery === true ? 0 : this.observer !== undefined ? STAGE_SAMPLE_MASK : -1;
    this.stageHeaders = stageHeaders(stages);
    hooks.observer?.stages?.(this.names);
  }

  /** Runs the stages from the first; `hooks.exit` is called exactly once. */
  run(ctx: BaseCtx): void {
    if (this.timeMask >= 0 && (++this.seq & this.timeMask) === 0) {
      ctx.timed = true;
      if (this.timeMask === 0) ctx.timings = new Float64Array(this.stages.length);
    }
    this.step(ctx, 0);
  }

  /**
   * The headers of an answer, for a front end whose answers carry them: the Exit's own, those
   * the stages add (`Stage.headers`), and Server-Timing where the request's stage times are kept.
   */
  headers(ctx: BaseCtx, exit: Exit): readonly Header[] | undefined {
    let headers = exit.headers;
    const extra = this.stageHeaders?.(ctx, exit);
    if (extra !== undefined) headers = headers === undefined ? extra : [...headers, ...extra];
    if (ctx.timings !== null) headers = [...(headers ?? []), ['server-timing', serverTiming(ctx.timings, this.names)]];
    return headers;
  }

  /**
   * The stages from `from` on (see `compiled`): a timed request goes the loop that times them;
   * every other one the straight-line code compiled for this stage list.
   */
  private step(ctx: BaseCtx, from: number): void {
    if (ctx.timed) this.timedStep(ctx, from);
    else this.fast(ctx, from);
  }

  /** A timed stage's duration: to the per-stage series, and kept for Server-Timing. */
  private timed(ctx: BaseCtx, i: number, ms: number): void {
    this.observer?.stage?.(this.names[i]!, ms);
    if (ctx.timings !== null) ctx.timings[i] = ms;
  }

  /**
   * The untimed run, compiled once per pipeline (stage objects, not input, go into it): one call
   * site per stage, each seeing one stage's `run` (a loop's one site sees them all: a
   * megamorphic call on every stage of every request, measured with bench:instr), then what a
   * stage that did not pass the context on returned, handled in `verdict`. Entered at the stage
   * after a wait (`from`).
   */
  private readonly fast: (ctx: BaseCtx, from: number) => void;

  /** What stage `i` returned when it was not the context: a wait, an answer, or another context (called by the compiled run). */
  verdict(ctx: BaseCtx, out: unknown, i: number): void {
    if (out instanceof Later) {
      // Continues synchronously when it settles (inside the uWS data callback for the body); one function for every request.
      (out as Later<unknown>).onWith(this.resumeAfter, ctx, i);
      return;
    }
    if (out instanceof Promise) {
      out.then(
        (v: unknown) => this.resumeAfter(v, ctx, i),
        (e: unknown) => this.guarded(ctx, FAIL.internal_error, i, e),
      );
      return;
    }
    if (out instanceof Exit) this.hooks.exit(ctx, out, this.names[i]!, undefined);
    else if (i >= this.stages.length - 1)
      this.hooks.exit(ctx, FAIL.internal_error, this.names[this.stages.length - 1]!, new Error('pipeline ended without an answer'));
    else this.step(out as BaseCtx, i + 1);
  }

  /** A stage threw (called by the compiled run). */
  threw(ctx: BaseCtx, i: number, e: unknown): void {
    this.hooks.exit(ctx, FAIL.internal_error, this.names[i]!, e);
  }

  /** The run after a wait: its throws (the answer path's) are the pipeline's own, never its settler's. */
  private readonly resumeAfter = (v: unknown, ctx: BaseCtx, i: number): void => {
    try {
      this.resume(ctx, v, i);
    } catch (e) {
      this.failed(ctx, e);
    }
  };

  /** An exit after a wait, its throw the pipeline's own. */
  private guarded(ctx: BaseCtx, exit: Exit, i: number, err: unknown): void {
    try {
      this.hooks.exit(ctx, exit, this.names[i]!, err);
    } catch (e) {
      this.failed(ctx, e);
    }
  }

  private failed(ctx: BaseCtx, e: unknown): void {
    const failed = this.hooks.failed;
    if (failed !== undefined) failed(ctx, e);
    else process.emitWarning(e instanceof Error ? e : new Error(String(e)), 'PipelineAnswerError');
  }

  /** The loop that times each stage (Server-Timing, the sampled per-stage metrics). */
  private timedStep(ctx: BaseCtx, from: number): void {
    const { stages, hooks } = this;
    for (let i = from; i < stages.length; i++) {
      const t = performance.now();
      let out: unknown;
      try {
        out = stages[i]!.run(ctx);
      } catch (e) {
        hooks.exit(ctx, FAIL.internal_error, this.names[i]!, e);
        return;
      }
      if (out === ctx) {
        this.timed(ctx, i, performance.now() - t);
        continue;
      }
      if (out instanceof Later || out instanceof Promise) {
        (out as PromiseLike<unknown>).then(
          (v: unknown) => {
            this.timed(ctx, i, performance.now() - t);
            this.resumeAfter(v, ctx, i);
          },
          (e: unknown) => this.guarded(ctx, FAIL.internal_error, i, e),
        );
        return;
      }
      this.timed(ctx, i, performance.now() - t);
      if (out instanceof Exit) {
        hooks.exit(ctx, out, this.names[i]!, undefined);
        return;
      }
      ctx = out as BaseCtx;
    }
    hooks.exit(ctx, FAIL.internal_error, this.names[stages.length - 1]!, new Error('pipeline ended without an answer'));
  }

  private resume(ctx: BaseCtx, v: unknown, i: number): void {
    if (v instanceof Exit) this.hooks.exit(ctx, v, this.names[i]!, undefined);
    else if (ctx.aborted) this.hooks.exit(ctx, FAIL.client_closed, this.names[i]!, undefined);
    else this.step(v as BaseCtx, i + 1);
  }
}

/** The stages' answer headers as one function: the one stage's own where one adds any (the common case: no loop per answer), else each in stage order. */
function stageHeaders(stages: readonly RunnerStage[]): ((ctx: BaseCtx, exit: Exit) => readonly Header[] | undefined) | null {
  const adding = stages.filter((s) => s.headers !== undefined);
  if (adding.length === 0) return null;
  if (adding.length === 1) return adding[0]!.headers!.bind(adding[0]);
  return (ctx, exit) => {
    let all: Header[] | undefined;
    for (const s of adding) {
      const h = s.headers!(ctx, exit);
      if (h !== undefined) (all ??= []).push(...h);
    }
    return all;
  };
}

/**
 * Builds the stage array so that a wrong order is a compile error: each `add` takes a stage
 * whose fields read were all added by the stages before it. (Not `then`: a builder with a
 * `then` method is a thenable, and an async function returning one would never resolve.)
 */
export class PipelineBuilder<Ctx extends BaseCtx, Names extends string = never> {
  private constructor(readonly stages: readonly RunnerStage[]) {}

  static start<C extends BaseCtx>(): PipelineBuilder<C> {
    return new PipelineBuilder<C>([]);
  }

  add<Add extends object, N extends string>(stage: Stage<Ctx, Add, N>): PipelineBuilder<Ctx & Add, Names | N> {
    return new PipelineBuilder<Ctx & Add, Names | N>([...this.stages, stage]);
  }

  end(stage: TerminalStage<Ctx>, hooks: PipelineHooks): Pipeline {
    return new Pipeline([...this.stages, stage], hooks);
  }
}

/** The context a builder's stages produce (what a terminal stage after them may read). */
export type BuiltContext<B> = B extends PipelineBuilder<infer C, string> ? C : never;
/** The names of a builder's stages. */
export type BuiltNames<B> = B extends PipelineBuilder<BaseCtx, infer N> ? N : never;
