/**
 * X-RateLimit-Limit and X-RateLimit-Remaining on every answer to an authenticated submission
 * whose grant is known, so a client can pace itself before it is refused: from the rate-limit
 * stage's verdict when it ran, else from the bucket as it stands (nothing spent). A 429 carries
 * them already. On the hot path: the limit header is built once per grant, small counts come
 * from a table of strings.
 */
import type { Grant } from '../accounts/types.js';
import type { Exit, Header } from '../errors.js';
import type { BaseCtx } from '../pipeline/context.js';
import { finished } from '../stages/list.js';
import type { TokenBuckets } from '../limits/rate-limiter.js';

const COUNTS = Array.from({ length: 1024 }, (_, i) => String(i));

export function quotaHeaders(limiter: TokenBuckets): (ctx: BaseCtx, exit: Exit) => readonly Header[] | undefined {
  const limits = new WeakMap<Grant, Header>();
  return (base, exit) => {
    if (exit.reason === 'rate_limited') return undefined; // its Exit carries them
    const ctx = finished(base);
    const grant = ctx.grant;
    if (grant === undefined || ctx.rawTx === undefined) return undefined;
    const { perSecond, burst } = grant.rateLimit;
    let limit = limits.get(grant);
    if (limit === undefined) limits.set(grant, (limit = ['x-ratelimit-limit', String(burst)]));
    const remaining = ctx.quota !== undefined ? ctx.quota.remaining : limiter.peek(grant.bucketKey, perSecond, burst);
    return [limit, ['x-ratelimit-remaining', remaining < COUNTS.length ? COUNTS[remaining]! : String(remaining)]];
  };
}
