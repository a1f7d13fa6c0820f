/**
 * The window of recently accepted hashes (forward/dedup.ts, docs/design.md §5.8): held for its
 * time and within its bound, and what expired during a silence evicted a few at a time by the
 * adds after it, never all at once by the first one (docs/performance.md, "A silence that costs
 * nothing").
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { RecentlyAccepted } from '../../src/forward/dedup.js';

const hash = (i: number) => '0x' + i.toString(16).padStart(64, '0');

describe('recently accepted hashes', () => {
  it('holds a hash for its window, and beyond the bound lets the oldest go', () => {
    const r = new RecentlyAccepted(600_000, 10);
    for (let i = 0; i < 25; i++) r.add(hash(i));
    assert.equal(r.size, 10);
    for (let i = 0; i < 15; i++) assert.equal(r.has(hash(i)), false, `hash ${i} is past the bound`);
    for (let i = 15; i < 25; i++) assert.equal(r.has(hash(i)), true, `hash ${i} is held`);
  });

  it('after a silence: the first add evicts two expired hashes, not all of them; each next one two more; no expired one is held', async () => {
    const r = new RecentlyAccepted(5, 100_000);
    for (let i = 0; i < 1000; i++) r.add(hash(i));
    const before = r.size;
    assert.ok(before >= 3, `hashes held before the silence: ${before}`);
    // Past the window: every hash held has expired.
    await sleep(30);
    r.add(hash(1_000_000));
    assert.equal(r.size, before - 2 + 1, 'the first add after the silence evicted two expired hashes');
    // Each add evicts two from the front while they are expired: the backlog shrinks by one an add.
    const adds = Math.floor((before - 3) / 2);
    for (let k = 1; k <= adds; k++) r.add(hash(2_000_000 + k));
    assert.equal(r.size, before - 1 - adds, 'each add after the first evicted two expired hashes');
    // An expired hash is never answered as accepted, evicted or not (`has` drops one it finds).
    for (let i = 0; i < 1000; i++) assert.equal(r.has(hash(i)), false, `hash ${i} expired`);
  });

  it('a window of 0 holds nothing', () => {
    const r = new RecentlyAccepted(0, 10);
    r.add(hash(1));
    assert.equal(r.has(hash(1)), false);
    assert.equal(r.size, 0);
  });
});
