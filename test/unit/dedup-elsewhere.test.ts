/**
 * Identical bytes on two threads (forward/dedup.ts, docs/design.md §5.8): the second waits for
 * the first one's outcome, and forwards itself only once it holds the claim or the wait is over.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChainDuplicates } from '../../src/forward/dedup.js';
import type { SharedTxTable } from '../../src/limits/shared-tables.js';

/** A shared table scripted as other threads would leave it: each peek and claim answers the next of its script. */
function scripted(peeks: string[], claims: string[]): SharedTxTable & { claims: number } {
  const t = {
    claims: 0,
    mark: () => 0,
    settled: () => Promise.resolve('ok'),
    peek: () => peeks.shift() ?? 'none',
    claim: () => {
      t.claims++;
      return claims.shift() ?? 'claimed';
    },
    settle: () => {},
  };
  return t as unknown as SharedTxTable & { claims: number };
}

describe('identical bytes forwarded elsewhere', () => {
  it("another thread's outcome, accepted: answered from it", async () => {
    const d = new ChainDuplicates({ acceptedTtlMs: 1000, maxEntries: 10 }, scripted(['in_flight', 'accepted'], []));
    assert.equal(await d.awaitElsewhere('0xab', performance.now() + 1000), true);
  });
  it('a third thread claims the bytes between the first settling and this one claiming: this one waits for it, never forwards too', async () => {
    const shared = scripted(['none', 'in_flight', 'accepted'], ['in_flight']);
    const d = new ChainDuplicates({ acceptedTtlMs: 1000, maxEntries: 10 }, shared);
    assert.equal(await d.awaitElsewhere('0xab', performance.now() + 1000), true);
  });
  it('the wait over with the bytes still in flight elsewhere: this one forwards itself', async () => {
    const d = new ChainDuplicates({ acceptedTtlMs: 1000, maxEntries: 10 }, scripted(['in_flight'], ['in_flight']));
    assert.equal(await d.awaitElsewhere('0xab', performance.now() - 1), false);
  });
});
