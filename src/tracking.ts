/**
 * Tracking accepted transactions, composed (`chains[].track`; src/track/, docs/tracking.md): a
 * tracker per tracked chain, the one head subscription per chain it shares with the sync send,
 * the forward's observer of those chains, /ready's detail and the WebSocket transport's feeds. A chain
 * without tracking gets nothing of it: its forward's observer is the one it had.
 */
import type { ChainConfig, Config } from './config/config.js';
import type { ForwardObserver } from './forward/forwarder.js';
import type { Logger } from './log/log.js';
import { HeadWatch } from './sync/head-watch.js';
import { trackedObserver } from './track/observe.js';
import { Tracker, type TrackObserver } from './track/tracker.js';

export class Tracking {
  readonly trackers = new Map<number, Tracker>();
  private readonly ownHeads: HeadWatch[] = [];

  constructor(
    private readonly config: Config,
    private readonly log: Logger,
    private readonly observer: TrackObserver | undefined,
  ) {}

  /** The forward's observer of a chain: told which sequencer accepted by which rule where the chain tracks. */
  observerOf<O extends ForwardObserver>(c: ChainConfig, base: O | undefined): O | undefined {
    return c.track.enabled ? trackedObserver(base, () => this.trackers.get(c.chainId)) : base;
  }

  /** The trackers, once the sends exist (a chain's head subscription is its sync send's where it has one). */
  attach(syncSenders: ReadonlyMap<number, { readonly heads: HeadWatch | null }>): void {
    for (const c of this.config.chains) {
      if (!c.track.enabled) continue;
      let heads = syncSenders.get(c.chainId)?.heads ?? null;
      if (heads === null && c.rpcWs !== null) this.ownHeads.push((heads = new HeadWatch(c.rpcWs, this.log, () => {})));
      this.trackers.set(c.chainId, new Tracker(c, this.log, heads, this.observer));
    }
  }

  /** What the WebSocket transport subscribes to, by chain. */
  laneFeeds(): Map<number, { feed: Tracker; maxSubscriptions: number }> {
    return new Map(
      this.config.chains
        .filter((c) => this.trackers.has(c.chainId))
        .map((c) => [c.chainId, { feed: this.trackers.get(c.chainId)!, maxSubscriptions: c.track.maxSubscriptions }]),
    );
  }

  /** /ready's detail for a watcher stalled or failing (a warning: submissions are unaffected). */
  problems(): string | null {
    const problems: string[] = [];
    for (const [chainId, t] of this.trackers) {
      const w = t.watcher;
      if (w.stalled) problems.push(`chain ${chainId}: the transaction watcher stalled (restarted ${w.restarts}x): ${w.problem ?? ''}`.trimEnd());
      else if (w.problem !== null) problems.push(`chain ${chainId}: the transaction watcher: ${w.problem}`);
    }
    return problems.length === 0 ? null : problems.join('; ');
  }

  async close(): Promise<void> {
    for (const h of this.ownHeads) h.close();
    await Promise.all([...this.trackers.values()].map((t) => t.close()));
  }
}
