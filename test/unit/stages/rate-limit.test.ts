/** The rate limit stage: a token per submission from the (account, chain) bucket; none for a duplicate. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Exit } from '../../../src/base/errors.js';
import { RateLimiter } from '../../../src/limits/rate-limiter.js';
import { createRateLimitStage } from '../../../src/stages/rate-limit.js';
import { given, passed, reason } from '../../support/stage-context.js';
import { chainA, decoded, grantOf } from '../../support/stage-fixtures.js';

describe('rate limit stage', () => {
  it('spends a token per request, 429 with headers when empty, nothing for duplicates', () => {
    let now = 0;
    const limiter = new RateLimiter(() => now);
    const dups = new Set(['0xdup']);
    const stage = createRateLimitStage(limiter, { isDuplicate: (_c, h) => dups.has(h) });
    const c = (hash: string) => given({ grant: grantOf('a'), chain: chainA, tx: decoded({ hash }) }).run(stage);
    assert.equal(passed(c('0x1')).quota, 1);
    assert.equal(passed(c('0x2')).quota, 0);
    assert.equal(reason(c('0xdup')), 'pass');
    const r = c('0x3');
    assert.ok(r instanceof Exit);
    assert.equal(r.status, 429);
    assert.deepEqual(r.headers, [
      ['retry-after', '1'],
      ['x-ratelimit-limit', '2'],
      ['x-ratelimit-remaining', '0'],
    ]);
    assert.equal(JSON.parse(r.body('1')).error.data.retryAfterMs, 1000);
    now += 1000;
    assert.equal(reason(c('0x4')), 'pass');
  });
});
