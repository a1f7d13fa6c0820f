/**
 * The reasons check of the pipeline's hooks (TXGATE_CHECK_REASONS, set by the test suite:
 * pipeline.ts): an answer whose reason its stage does not declare fails loudly.
 */
import type { Exit } from '../base/errors.js';
import type { Reason } from '../base/reasons.js';
import type { BaseCtx } from './context.js';

/** What the check reads of a stage (pipeline.ts RunnerStage). */
interface Declared {
  readonly name: string;
  readonly reasons: readonly string[];
  readonly setsId?: true;
}

/** The hooks it puts the check in front of (pipeline.ts PipelineHooks). */
interface Exiting {
  exit(ctx: BaseCtx, exit: Exit, stage: string, error: unknown): void;
}

/** Reasons any point may give: the client left, or a stage threw. */
const ANYWHERE: ReadonlySet<string> = new Set<Reason>(['client_closed', 'internal_error']);

/**
 * The hooks with a check in front (TXGATE_CHECK_REASONS, set by the test suite): an Exit whose
 * reason its stage does not declare, or an id set by a stage that does not declare it, throws,
 * so the request fails loudly instead of the reasons table silently going wrong.
 */
export function checkedHooks<H extends Exiting>(stages: readonly Declared[], hooks: H): H {
  const declared = new Map(stages.map((s) => [s.name, new Set<string>(s.reasons)]));
  const setsId = stages.findIndex((s) => s.setsId === true);
  return {
    ...hooks,
    exit(ctx, exit, stage, error) {
      if (!ANYWHERE.has(exit.reason) && declared.get(stage)?.has(exit.reason) !== true)
        throw new Error(`stage ${stage} gave ${exit.reason}, which it does not declare in its reasons`);
      const at = stages.findIndex((s) => s.name === stage);
      if (ctx.idJson !== 'null' && (setsId < 0 || at < setsId)) throw new Error(`the id was set before its stage (${stage})`);
      hooks.exit(ctx, exit, stage, error);
    },
  };
}
