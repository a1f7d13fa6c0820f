/**
 * The sync call's wait, spent once (src/sync/budget.ts; docs/design.md §6.2): the sequencer's
 * part and the settling after it add up to the asked wait, never a forward timeout beyond it;
 * the wait told to the sequencer ends before the call is cut.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { syncBudget, toldWaitMs } from '../../src/sync/budget.js';

describe('the sync wait budget', () => {
  it('the two parts add up to the wait, for every wait and forward timeout', () => {
    for (const waitMs of [1, 2, 3, 4, 7, 100, 999, 2000, 60_000])
      for (const forwardTimeoutMs of [10, 500, 2000, 60_000]) {
        const b = syncBudget(waitMs, forwardTimeoutMs);
        const what = `wait ${waitMs}, forward timeout ${forwardTimeoutMs}`;
        if (waitMs > 1) assert.equal(b.sequencerMs + b.settleMs, waitMs, what);
        assert.ok(b.sequencerMs >= 1 && b.settleMs >= 1, what);
        assert.ok(b.settleMs <= Math.max(1, Math.min(forwardTimeoutMs, waitMs / 4)), what);
        assert.ok(b.sequencerMs >= (waitMs * 3) / 4 - 1, `${what}: the sequencer holds most of it`);
      }
  });
  it('the issue case: maxWaitMs 2000 with a 2000-ms forward timeout is 1500 + 500, not 2000 + 2000', () => {
    assert.deepEqual(syncBudget(2000, 2000), { sequencerMs: 1500, settleMs: 500 });
  });
  it('the told wait is under the held one (its answer comes first), by a tenth and at most 100 ms', () => {
    assert.equal(toldWaitMs(1500), 1400);
    assert.equal(toldWaitMs(500), 450);
    assert.equal(toldWaitMs(1), 1);
    for (const h of [10, 333, 5000]) assert.ok(toldWaitMs(h) < h && toldWaitMs(h) >= h - 100, String(h));
  });
});
