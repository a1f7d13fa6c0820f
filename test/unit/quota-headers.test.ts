/**
 * The X-RateLimit headers of an answered submission (src/stages/quota-headers.ts, the rate-limit stage's), written as bytes:
 * the count is exact on both sides of its table of small counts, from the stage's verdict or the
 * bucket as it stands.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REJECT, result } from '../../src/base/errors.js';
import type { BaseCtx } from '../../src/pipeline/context.js';
import { quotaHeaders } from '../../src/stages/quota-headers.js';
import type { TokenBuckets } from '../../src/limits/rate-limiter.js';

const text = (v: string | Uint8Array) => (typeof v === 'string' ? v : Buffer.from(v).toString('latin1'));
const grant = { rateLimit: { perSecond: 10, burst: 5_000_000 }, bucketKey: 1 };
const limiter = { peek: () => 4_999_999 } as unknown as TokenBuckets;
const ctx = (quota?: number) => ({ grant, rawTx: '0x00', quota }) as unknown as BaseCtx;

describe('quota headers', () => {
  it('the limit and the remaining count, exact for any count, as text a client reads', () => {
    const headers = quotaHeaders(limiter);
    // Repeated counts too: a grant's last pair is kept while the count is the same.
    for (const remaining of [0, 0, 7, 1023, 1024, 1025, 1025, 99_999, 4_999_998, 4_999_998, 7, 2 ** 40 + 3]) {
      const h = headers(ctx(remaining), result('0x01'))!;
      assert.deepEqual(
        h.map(([k, v]) => [text(k), text(v)]),
        [
          ['x-ratelimit-limit', '5000000'],
          ['x-ratelimit-remaining', String(remaining)],
        ],
      );
    }
    // Where the rate-limit stage did not run: the bucket as it stands.
    assert.equal(text(headers(ctx(), REJECT.fee_rejected)![1]![1]), '4999999');
    // A 429 carries its own.
    assert.equal(headers(ctx(0), REJECT.rate_limited), undefined);
  });
});
