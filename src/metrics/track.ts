/**
 * The tracking metrics (chains with `track.enabled`): the moves the trackers report, and their
 * published views (track/watch-state.ts: the tables' counts, the watchers' state) read at each snapshot.
 */
import { upstreamLabel } from '../upstreams/upstream.js';
import type { TrackState } from '../track/states.js';
import type { Entry } from '../track/table.js';
import type { TrackObserver } from '../track/tracker.js';
import type { TrackView } from '../track/watch-state.js';
import type { METRICS } from './catalog.js';
import type { Families } from './family-set.js';

type F = Families<typeof METRICS>;

export class TrackMetrics {
  private trackers: ReadonlyMap<number, TrackView> = new Map();

  constructor(private readonly f: F) {}

  /** Bound up front for the chains that track (alerts see zeros, not gaps). */
  bind(chains: readonly { readonly chainId: number; readonly sequencers: readonly string[]; readonly flashblocks: { readonly enabled: boolean } }[]): void {
    for (const { chainId: chain, sequencers, flashblocks } of chains) {
      if (flashblocks.enabled) {
        this.f.preconfirmation.child({ chain });
        this.f.preconfirmationsLost.child({ chain });
      }
      for (const s of sequencers) this.f.inclusion.child({ chain, sequencer: upstreamLabel(s) });
      for (const state of ['pending', 'final']) this.f.tracked.child({ chain, state });
      this.f.trackHead.child({ chain });
      for (const state of ['included', 'reverted', 'replaced', 'dropped', 'expired']) this.f.trackFinal.child({ chain, state });
      this.f.trackReorged.child({ chain });
      for (const kind of ['final', 'refused']) this.f.trackEvicted.child({ chain, kind });
      this.f.trackStalled.child({ chain });
      this.f.trackRestarts.child({ chain });
    }
  }

  readonly observer: TrackObserver = {
    changed: (chain: number, e: Entry, from: TrackState | null) => {
      if (from === null) return;
      if (e.state === 'preconfirmed') {
        if (e.at?.kind === 'preconfirmed') this.f.preconfirmation.child({ chain }).observe(Math.max(0, e.at.seenAt - e.acceptedAt) / 1000);
        return;
      }
      if (from === 'preconfirmed' && e.state === 'pending') return; // txgate_preconfirmations_lost_total, read from the tracker
      if (e.state === 'pending') {
        if (from !== 'dropped') this.f.trackReorged.child({ chain }).value++; // else a resend after dropped
        return;
      }
      this.f.trackFinal.child({ chain, state: e.state }).value++;
      if ((e.state === 'included' || e.state === 'reverted') && e.reorgs === 0 && e.at?.kind === 'block')
        this.f.inclusion.child({ chain, sequencer: e.sequencer }).observe(Math.max(0, e.at.seenAt - e.acceptedAt) / 1000);
    },
  };

  watch(trackers: ReadonlyMap<number, TrackView>): void {
    this.trackers = trackers;
  }

  /** The tables and watchers, read at a snapshot. */
  read(): void {
    for (const [chain, t] of this.trackers) {
      this.f.tracked.child({ chain, state: 'pending' }).value = t.pending;
      this.f.tracked.child({ chain, state: 'final' }).value = t.final;
      this.f.trackEvicted.child({ chain, kind: 'final' }).value = t.evicted;
      this.f.trackEvicted.child({ chain, kind: 'refused' }).value = t.refused;
      this.f.trackHead.child({ chain }).value = Math.max(0, t.watcher.head);
      this.f.trackStalled.child({ chain }).value = t.watcher.stalled ? 1 : 0;
      this.f.trackRestarts.child({ chain }).value = t.watcher.restarts;
      if (t.preconfirmationsLost > 0) this.f.preconfirmationsLost.child({ chain }).value = t.preconfirmationsLost;
    }
  }
}
