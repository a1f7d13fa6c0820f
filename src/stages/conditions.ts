/**
 * The conditions stage (eth_sendRawTransactionConditional, docs/conditional.md): the options'
 * shapes and cost (conditional/options.ts), then the head check (conditional/head.ts): a bound
 * the chain's fresh head has passed is refused at once, nothing sent. Any other send passes with
 * one comparison: nothing here looks at a plain submission.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { ChainRuntime } from '../config/chains.js';
import type { HeadView } from '../conditional/head.js';
import { passedBound } from '../conditional/head.js';
import { type Conditions, readConditions } from '../conditional/options.js';
import { Exit } from '../base/errors.js';
import { fieldSetter, type BaseCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';
import type { Send } from '../rpc/send-kind.js';

const setConditions = fieldSetter('conditions');

export function createConditionsStage(
  /** By chain id, the head of the chains that serve the method and have a head source (`rpc` or `rpcWs`). */
  heads: ReadonlyMap<number, HeadView> = new Map(),
): Stage<BaseCtx & { readonly send: Send; readonly chain: ChainRuntime }, { readonly conditions: Conditions | undefined }, 'conditions'> {
  return {
    name: 'conditions',
    about: "only for `eth_sendRawTransactionConditional`: the options' shapes, ranges and cost; a bound the chain's fresh head has passed is refused",
    reasons: ['invalid_params', 'conditions_too_costly', 'conditions_expired'],
    adds: 'conditions',
    run(ctx) {
      const send = ctx.send;
      // Every other send: its field stays unset (the context is created with it undefined).
      if (send.kind !== 'conditional') return ctx as typeof ctx & { readonly conditions: undefined };
      const cfg = ctx.chain.config.conditional;
      const c = readConditions(send.options, cfg.maxCost);
      if (c instanceof Exit) return c;
      const dead = passedBound(c, heads.get(ctx.chain.chainId)?.head() ?? null, cfg.headMaxAgeMs, performance.now());
      return dead ?? setConditions(ctx, c);
    },
  };
}
