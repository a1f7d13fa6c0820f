/**
 * The untimed run of a pipeline (pipeline.ts), compiled once per stage list: one call site per
 * stage, each seeing one stage's `run` (a loop's one site sees them all: a megamorphic call on
 * every stage of every request, measured with bench:instr).
 */
import type { BaseCtx } from './context.js';

/**
 * The stage list as straight-line code: `case i:` calls stage i and falls through to the next
 * while a stage returns the context itself; anything else (or the last stage passing the context
 * on, which `verdict` refuses) goes to the pipeline's `verdict` with the stage's index, a throw
 * to its `threw` (method calls on one object: no closure between them). Built with `new Function` from the stages' count only (no name or
 * input goes into the source).
 */
export function compiled(
  stages: readonly { run(ctx: BaseCtx): unknown }[],
  p: { verdict(ctx: BaseCtx, out: unknown, i: number): void; threw(ctx: BaseCtx, i: number, e: unknown): void },
): (ctx: BaseCtx, from: number) => void {
  const cases = stages.map((_, i) => `      case ${i}: i = ${i}; out = s${i}.run(ctx); if (out !== ctx) break;`).join('\n');
  // The verdict is given outside the try: a throw there (an exit hook) is not a stage's.
  const src = `return function runStages(ctx, from) {
  let i = from;
  let out = ctx;
  try {
    switch (from) {
${cases}
    }
  } catch (e) {
    return p.threw(ctx, i, e);
  }
  return p.verdict(ctx, out, i);
};`;
  const args = stages.map((_, i) => `s${i}`);
  return new Function(...args, 'p', src)(...stages, p) as (ctx: BaseCtx, from: number) => void;
}
