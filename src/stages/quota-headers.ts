/**
 * The rate-limit stage's answer headers (Stage.headers): X-RateLimit-Limit and
 * X-RateLimit-Remaining on every answer to an authenticated submission whose grant is known, so a
 * client can pace itself before it is refused: from the stage's verdict when it ran, else from
 * the bucket as it stands (nothing spent). A 429 carries them already. On the hot path the
 * headers are bytes encoded once (a string is UTF-8-encoded by uWS.js on every write,
 * http/write.ts): the names, the limit once per grant, small counts from a table.
 */
import type { Grant } from '../accounts/types.js';
import type { Exit, Header } from '../base/errors.js';
import type { Quota, TokenBuckets } from '../limits/rate-limiter.js';
import type { BaseCtx } from '../pipeline/context.js';

/** The fields read, each set only where its stage ran. */
type Answered = BaseCtx & { readonly grant?: Grant | undefined; readonly rawTx?: unknown; readonly quota?: Quota | undefined };

const encoder = new TextEncoder();
const LIMIT = encoder.encode('x-ratelimit-limit');
const REMAINING = encoder.encode('x-ratelimit-remaining');
const COUNTS = Array.from({ length: 1024 }, (_, i): Header => [REMAINING, encoder.encode(String(i))]);

/**
 * A grant's headers: its limit, encoded once, and the last pair given (both headers), kept while
 * the next answer's count is the same (a bucket far from empty gives the same count answer after
 * answer): no array or bytes built then. A pair is never written to once given.
 */
interface GrantHeaders {
  readonly limit: Header;
  remaining: number;
  pair: readonly Header[];
}

export function quotaHeaders(limiter: TokenBuckets): (ctx: Answered, exit: Exit) => readonly Header[] | undefined {
  const byGrant = new WeakMap<Grant, GrantHeaders>();
  return (ctx, exit) => {
    if (exit.reason === 'rate_limited') return undefined; // its Exit carries them
    const grant = ctx.grant;
    if (grant === undefined || ctx.rawTx === undefined) return undefined;
    const { perSecond, burst } = grant.rateLimit;
    let g = byGrant.get(grant);
    if (g === undefined) byGrant.set(grant, (g = { limit: [LIMIT, encoder.encode(String(burst))], remaining: -1, pair: [] }));
    const remaining = ctx.quota !== undefined ? ctx.quota : limiter.peek(grant.bucketKey, perSecond, burst);
    if (remaining === g.remaining) return g.pair;
    g.remaining = remaining;
    return (g.pair = [g.limit, remaining < COUNTS.length ? COUNTS[remaining]! : [REMAINING, digits(remaining)]]);
  };
}

/** A whole count's decimal digits as bytes, written here (new bytes for each count: bytes given are never written to again, one answer's may be written after the next is built). */
function digits(n: number): Uint8Array {
  let len = 1;
  for (let m = n; m >= 10; m = Math.floor(m / 10)) len++;
  const b = new Uint8Array(len);
  for (let i = len - 1; i >= 0; i--) {
    b[i] = 48 + (n % 10);
    n = Math.floor(n / 10);
  }
  return b;
}
