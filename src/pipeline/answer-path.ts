/**
 * The answer path every front end shares: a pipeline exit is written by the front end's writer
 * (HTTP's is one; a second transport brings its own), then logged, counted by the observer and
 * taken off the in-flight count that a graceful stop waits on. Exactly once per request.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { Exit } from '../base/errors.js';
import type { BaseCtx } from './context.js';
import type { RequestObserver } from './pipeline.js';

/** How a front end delivers an answer. */
export interface AnswerWriter<C extends BaseCtx> {
  /**
   * Writes the answer to the request of `ctx` (or does nothing if it was answered or its client
   * is gone): true once written, or a promise of whether it was (false: the connection closed
   * first) when that is known only later. Most answers are written at once: nothing allocated.
   */
  write(ctx: C, exit: Exit): boolean | PromiseLike<boolean>;
}

/** The one log line of an answered request (front/request-log.ts). */
export interface ExitLog {
  exit(ctx: BaseCtx, exit: Exit, stage: string, err: unknown, micros: number, unanswered: boolean, via: string): void;
}

export interface AnswerPathDeps {
  readonly log: ExitLog;
  readonly observer?: RequestObserver;
  /** How the log names a request whose method is unknown (`POST /`, `ws`). */
  readonly via: string;
}

export class AnswerPath<C extends BaseCtx> {
  private inFlight = 0;
  private idle: (() => void) | null = null;

  constructor(
    private readonly writer: AnswerWriter<C>,
    private readonly deps: AnswerPathDeps,
  ) {}

  /** Requests started and not yet answered (or known never to be). */
  get pending(): number {
    return this.inFlight;
  }

  /** A request enters the pipeline. */
  begin(): void {
    this.inFlight++;
  }

  /** The pipeline's exit hook: write, then log, observe and count the request done. */
  readonly exit = (ctx: BaseCtx, exit: Exit, stage: string, err: unknown): void => {
    const micros = Math.round((performance.now() - ctx.t0) * 1000);
    const w = this.writer.write(ctx as C, exit);
    if (typeof w === 'boolean') this.done(ctx, exit, stage, err, micros, w);
    else w.then((written) => this.done(ctx, exit, stage, err, micros, written));
  };

  private done(ctx: BaseCtx, exit: Exit, stage: string, err: unknown, micros: number, written: boolean): void {
    this.deps.log.exit(ctx, exit, stage, err, micros, !written, this.deps.via);
    this.deps.observer?.request(ctx, exit, stage, micros);
    if (--this.inFlight === 0 && this.idle !== null) this.idle();
  }

  /** Resolves when nothing is in flight, or after `graceMs`. */
  settled(graceMs: number): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      this.idle = () => {
        clearTimeout(timer);
        this.idle = null;
        resolve();
      };
    });
  }
}
