/**
 * X-RateLimit-Limit and X-RateLimit-Remaining on every answer to an authenticated submission
 * whose grant is known, so a client can pace itself before it is refused: from the rate-limit
 * stage's verdict when it ran, else from the bucket as it stands (nothing spent). A 429 carries
 * them already.
 */
import type { Header } from '../errors.js';
import type { BaseCtx, RequestContext } from '../pipeline/context.js';
import type { TokenBuckets } from './rate-limiter.js';

export function quotaHeaders(limiter: TokenBuckets): (ctx: BaseCtx) => readonly Header[] | undefined {
  return (base) => {
    const ctx = base as RequestContext;
    const grant = ctx.grant;
    if (grant === undefined || ctx.rawTx === undefined) return undefined;
    const { perSecond, burst } = grant.rateLimit;
    const remaining = ctx.quota !== undefined ? ctx.quota.remaining : limiter.peek(grant.bucketKey, perSecond, burst);
    return [
      ['x-ratelimit-limit', String(burst)],
      ['x-ratelimit-remaining', String(remaining)],
    ];
  };
}
