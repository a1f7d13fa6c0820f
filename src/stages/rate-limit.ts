/**
 * The rate limit stage: one token per submission from the bucket of (account, chain), with the
 * grant's perSecond and burst. Placed after fee admission (docs/design.md §3.3) so that refused
 * transactions do not spend the allowance. A resubmission of bytes already in flight or just
 * accepted is answered by the forwarder without a second forward and spends no token.
 */
import { reject } from '../base/errors.js';
import type { Grant } from '../accounts/types.js';
import type { ChainRuntime } from '../config/chains.js';
import { retryAfterSeconds, type Quota, type TokenBuckets } from '../limits/rate-limiter.js';
import { fieldSetter, type BaseCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';
import type { DecodedTx } from '../tx/types.js';
import { quotaHeaders } from './quota-headers.js';

const setQuota = fieldSetter('quota');

export interface DuplicateCheck {
  /** True when this tx hash is being forwarded now or was accepted moments ago. */
  isDuplicate(chainId: number, hash: string): boolean;
}

export function createRateLimitStage(
  limiter: TokenBuckets,
  duplicates?: DuplicateCheck,
): Stage<BaseCtx & { readonly grant: Grant; readonly chain: ChainRuntime; readonly tx: DecodedTx }, { readonly quota: Quota }, 'rate_limit'> {
  return {
    name: 'rate_limit',
    about: "one token from the account's bucket on this chain (none for bytes already in flight)",
    reasons: ['rate_limited'],
    adds: 'quota',
    run(ctx) {
      const { perSecond, burst } = ctx.grant.rateLimit;
      if (duplicates?.isDuplicate(ctx.chain.chainId, ctx.tx.hash) === true) return setQuota(ctx, limiter.peek(ctx.grant.bucketKey, perSecond, burst));
      const r = limiter.take(ctx.grant.bucketKey, perSecond, burst);
      if (r >= 0) return setQuota(ctx, r);
      const waitMs = Math.ceil(-r);
      return reject('rate_limited', undefined, { retryAfterMs: waitMs, perSecond, burst }, [
        ['retry-after', String(retryAfterSeconds(waitMs))],
        ['x-ratelimit-limit', String(burst)],
        ['x-ratelimit-remaining', '0'],
      ]);
    },
    // Every answer to a submission whose grant is known says how much of the quota is left.
    headers: quotaHeaders(limiter),
  };
}
