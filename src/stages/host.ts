/**
 * The host stage: the Host header (port stripped, case-insensitive, one trailing dot ignored)
 * must be one of a chain's hostnames (docs/design.md §2.2), else 421 before the body is read.
 */
import { Exit } from '../base/errors.js';
import { hostChain } from '../admission/admission.js';
import type { HostTable } from '../config/chains.js';
import type { ChainRuntime } from '../config/chains.js';
import { fieldSetter, type BaseCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';

const setChain = fieldSetter('chain');

export function createHostStage(hosts: HostTable): Stage<BaseCtx, { readonly chain: ChainRuntime }, 'host'> {
  return {
    name: 'host',
    about: 'the Host header picks the chain, before the body is read',
    reasons: ['misdirected_host'],
    adds: 'chain',
    run(ctx) {
      const chain = hostChain(hosts, ctx.head.host);
      return chain instanceof Exit ? chain : setChain(ctx, chain);
    },
  };
}
