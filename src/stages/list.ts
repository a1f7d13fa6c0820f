/**
 * The stage list: the pipeline's stages in their order, the one place that order is written.
 * Everything else takes the names from here or from the pipeline built from it (metrics series,
 * Server-Timing, the request log, the reasons table's `stages`, checked at compile time). A new
 * stage is its own file, one `.add` line here, and its rows in the reasons table (reasons.ts).
 */
import type { AccountStore } from '../accounts/types.js';
import type { HostTable } from '../config/chains.js';
import type { Config } from '../config/config.js';
import type { BaseCtx } from '../pipeline/context.js';
import { PipelineBuilder, type BuiltContext, type BuiltNames } from '../pipeline/pipeline.js';
import type { TokenBuckets } from '../limits/rate-limiter.js';
import type { REASONS } from '../base/reasons.js';
import type { TxDecoder } from '../tx/decoder.js';
import { createAuthStage } from './auth.js';
import { createConditionsStage } from './conditions.js';
import type { HeadView } from '../conditional/head.js';
import { createDecodeStage } from './decode.js';
import { createFeeStage } from './fee.js';
import { createGrantStage } from './grant.js';
import { createStatusStage, type StatusAnswers } from './status.js';
import { createHostStage } from './host.js';
import { createParseStage } from './parse.js';
import { createRateLimitStage, type DuplicateCheck } from './rate-limit.js';
import { createRouteStage } from './route.js';
import { createSenderStage } from './sender.js';
import { createSizeCapStage } from './size-cap.js';

export interface AdmissionParts {
  readonly config: Config;
  readonly hosts: HostTable;
  readonly store: AccountStore;
  readonly decoders: ReadonlyMap<number, TxDecoder>;
  readonly limiter: TokenBuckets;
  readonly duplicates?: DuplicateCheck;
  /** The chains that track their transactions: their status answers (txgate_getTransactionStatus). */
  readonly trackers?: ReadonlyMap<number, StatusAnswers>;
  /** The heads of the chains that serve eth_sendRawTransactionConditional and have a head source, `rpc` or `rpcWs` (stages/conditions.ts). */
  readonly heads?: ReadonlyMap<number, HeadView>;
}

/** The admission stages in their order; the forward stage (forward.ts) ends the pipeline. */
export function admissionStages(p: AdmissionParts) {
  return PipelineBuilder.start<BaseCtx>()
    .add(createHostStage(p.hosts))
    .add(createSizeCapStage(p.config.limits, p.store))
    .add(createParseStage())
    .add(createRouteStage(p.config.limits))
    .add(createAuthStage(p.store))
    .add(createGrantStage())
    .add(createStatusStage(p.trackers))
    .add(createConditionsStage(p.heads))
    .add(createDecodeStage(p.decoders))
    .add(createFeeStage(p.config))
    .add(createSenderStage())
    .add(createRateLimitStage(p.limiter, p.duplicates));
}

type Admission = ReturnType<typeof admissionStages>;
/** The context of a submission that passed every admission stage: what the forward stage may read. */
export type Admitted = BuiltContext<Admission>;
/** A stage's name: an admission stage's, or the forward's. */
export type StageName = BuiltNames<Admission> | 'forward';

/**
 * What code outside the pipeline (the request log, the metrics, the answer headers) may read of
 * a finished request: any field a stage adds, each possibly unset (its stage did not run).
 * Typed from the stages themselves, so renaming a stage's field breaks its readers at compile time.
 */
export type Finished = BaseCtx & { readonly [K in Exclude<keyof Admitted, keyof BaseCtx>]?: Admitted[K] };
export const finished = (ctx: BaseCtx): Finished => ctx as Finished;

/** Compile-time: the reasons table names no stage that is not in this list. */
type Named = (typeof REASONS)[keyof typeof REASONS]['stages'][number];
type Assert<T extends true> = T;
export type ReasonsNameTheseStages = Assert<Named extends StageName | 'front_end' | 'any' ? true : false>;
