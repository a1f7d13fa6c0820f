/**
 * A tracked transaction's entry kept small (src/track/table.ts Entry): its state, reorgs and
 * version share one number and each reads back as set, whatever the others (a version past 2^31
 * too, reorgs counted up to 255); its times kept as offsets read back as given, near now and far
 * from it (a time the offsets were not made for is still exact).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { TrackState } from '../../src/track/states.js';
import { Entry } from '../../src/track/table.js';

const STATES: TrackState[] = ['pending', 'included', 'reverted', 'replaced', 'dropped', 'expired'];
const entry = (acceptedAt: number, receivedAt = acceptedAt) =>
  new Entry({ hash: '0x01', account: 'desk', receivedAt, acceptedAt, sequencer: 's', rule: 'hash', sender: null, raw: '0x02' });

describe('Entry', () => {
  it('starts pending, version 1, no reorgs', () => {
    const e = entry(Date.now());
    assert.deepEqual([e.state, e.version, e.reorgs], ['pending', 1, 0]);
  });

  it('state, reorgs and version read back as set, in any order, each leaving the others', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ k: fc.constant('state' as const), v: fc.constantFrom(...STATES) }),
            fc.record({ k: fc.constant('reorgs' as const), v: fc.integer({ min: 0, max: 255 }) }),
            fc.record({ k: fc.constant('version' as const), v: fc.integer({ min: 1, max: 2 ** 40 }) }),
            fc.record({ k: fc.constant('bump' as const), v: fc.constant(0) }),
          ),
          { maxLength: 40 },
        ),
        (ops) => {
          const e = entry(Date.now());
          const want = { state: 'pending' as TrackState, reorgs: 0, version: 1 };
          for (const op of ops) {
            if (op.k === 'state') e.state = want.state = op.v;
            else if (op.k === 'reorgs') e.reorgs = want.reorgs = op.v;
            else if (op.k === 'version') e.version = want.version = op.v;
            else {
              e.version++;
              e.reorgs++;
              want.version++;
              want.reorgs = Math.min(255, want.reorgs + 1);
            }
            assert.deepEqual({ state: e.state, reorgs: e.reorgs, version: e.version }, want);
          }
        },
      ),
    );
  });

  it('reorgs are counted up to 255 and stay there', () => {
    const e = entry(Date.now());
    e.version = 2 ** 33;
    for (let i = 0; i < 300; i++) e.reorgs++;
    assert.deepEqual([e.reorgs, e.version, e.state], [255, 2 ** 33, 'pending']);
  });

  it('times read back as given, near now and far from it', () => {
    for (const t of [Date.now(), Date.now() + 40 * 86_400_000, 1_000, 4_102_444_800_000]) {
      const e = entry(t, t - 37);
      e.updatedAt = t + 90_000;
      assert.deepEqual([e.acceptedAt, e.receivedAt, e.updatedAt], [t, t - 37, t + 90_000]);
    }
  });
});
