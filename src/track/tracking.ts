/**
 * Tracking accepted transactions, composed (`chains[].track`; docs/tracking.md): a tracker per
 * tracked chain and process, the one head subscription per chain it shares with the sync send,
 * the forward's observer of those chains, /ready's detail and the WebSocket transport's feeds.
 * With several worker threads one of them owns the trackers and every other reaches them through
 * the seam (seam/): the same answers and pushes on every thread. A chain without tracking gets
 * nothing of it: its forward's observer is the one it had.
 */
import type { ChainConfig, Config } from '../config/config.js';
import type { Duplicates } from '../forward/dedup.js';
import type { ForwardObserver } from '../forward/forwarder.js';
import type { Logger } from '../log/log.js';
import { TrackOwner } from './seam/owner.js';
import type { TrackSeamPart } from './seam/protocol.js';
import { RemoteTracker, TrackRemote } from './seam/remote.js';
import { trackedObserver } from './observe.js';
import type { TrackedChain } from './tracked.js';
import { type HandOff, Tracker, type TrackObserver } from './tracker.js';
import type { HeadSource } from '../upstreams/chain-rpc/chain-heads.js';
import type { ChainRpc } from '../upstreams/chain-rpc/chain-rpc.js';
import type { FlashblocksSource } from '../flashblocks/feed.js';

export class Tracking {
  /** The trackers this thread owns (all of them with one thread; none on a worker that is not the owner). */
  readonly trackers = new Map<number, Tracker>();
  /** Every tracked chain's answers, acceptances and feed on this thread. */
  readonly chains = new Map<number, TrackedChain>();
  private owner: TrackOwner | null = null;
  private readonly remote: TrackRemote | null;
  private readonly remotes: RemoteTracker[] = [];

  constructor(
    private readonly config: Config,
    private readonly log: Logger,
    private readonly observer: TrackObserver | undefined,
    private readonly seam: TrackSeamPart | null = null,
  ) {
    this.remote = seam?.role === 'remote' && config.chains.some((c) => c.track.enabled) ? new TrackRemote(seam.port, seam.ring, log) : null;
  }

  /** The forward's observer of a chain: told which sequencer accepted by which rule where the chain tracks. */
  observerOf<O extends ForwardObserver>(c: ChainConfig, base: O | undefined): O | undefined {
    return c.track.enabled ? trackedObserver(base, () => this.chains.get(c.chainId)) : base;
  }

  /** The trackers, once the chains' links exist (a chain's RPC client is its link's; its heads the chain's, shared with its sync send). */
  attach(
    rpcs: ReadonlyMap<number, ChainRpc>,
    heads: ReadonlyMap<number, HeadSource>,
    duplicates: Duplicates,
    flashblocks: ReadonlyMap<number, FlashblocksSource> = new Map(),
  ): void {
    const tracked = this.config.chains.filter((c) => c.track.enabled);
    if (this.remote !== null) {
      for (const c of tracked) {
        const r = new RemoteTracker(c.chainId, rpcs.get(c.chainId)!, this.remote);
        this.remotes.push(r);
        this.chains.set(c.chainId, r);
      }
      return;
    }
    const make = (handOff: HandOff | null) =>
      new Map(
        tracked.map((c) => {
          const dedup = duplicates.forChain(c.chainId);
          const t = new Tracker(c, this.log, {
            rpc: rpcs.get(c.chainId)!,
            heads: heads.get(c.chainId) ?? null,
            observer: this.observer,
            dropped: (hash) => dedup.forget(hash),
            flashblocks: flashblocks.get(c.chainId) ?? null,
            handOff,
          });
          return [c.chainId, t] as const;
        }),
      );
    let made: ReadonlyMap<number, Tracker>;
    // The owner makes the trackers, each given the owner as its hand-off (seam/owner.ts).
    if (this.seam?.role === 'owner' && tracked.length > 0) {
      const { ports, rings } = this.seam;
      this.owner = new TrackOwner({ ports, rings, log: this.log, trackers: make });
      made = this.owner.trackers;
    } else made = make(null);
    for (const [chainId, t] of made) {
      this.trackers.set(chainId, t);
      this.chains.set(chainId, t);
    }
  }

  /** What the WebSocket transport subscribes to, by chain. */
  statusFeeds(): Map<number, { feed: TrackedChain; maxSubscriptions: number }> {
    return new Map(
      this.config.chains
        .filter((c) => this.chains.has(c.chainId))
        .map((c) => [c.chainId, { feed: this.chains.get(c.chainId)!, maxSubscriptions: c.track.maxSubscriptions }]),
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
    this.owner?.close();
    this.remote?.close();
    await Promise.all([...this.trackers.values()].map((t) => t.close()));
    await Promise.all(this.remotes.map((r) => r.close()));
  }
}
