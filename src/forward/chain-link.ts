/**
 * A chain's link to its sequencers, what its sends and the prober (src/health/) share: sequencer
 * clients opened on the chain's health slots, each user's on connections of its own (a wait never
 * holds one another needs), the chain RPC's client and the outcome rules (attempts.ts).
 */
import type { ChainConfig } from '../config/config.js';
import type { Logger } from '../log/log.js';
import { ChainRpc } from '../upstreams/chain-rpc/chain-rpc.js';
import { openUpstream } from '../upstreams/registry.js';
import type { CallTimes, OpenOptions, Upstream } from '../upstreams/upstream.js';
import { Attempts } from './attempts.js';
import type { AttemptObserver } from './parts.js';
import { type HealthSlots, Sequencer } from './sequencer.js';

/** The slot of each sequencer on the health board, in configuration order. */
export function slotIndex(chains: readonly Pick<ChainConfig, 'sequencers'>[]): number[][] {
  let n = 0;
  return chains.map((c) => c.sequencers.map(() => n++));
}

export interface ChainLinkParts {
  readonly chain: ChainConfig;
  /** The process-wide sequencer health. */
  readonly board: HealthSlots;
  /** This chain's slots on it, in the order of `chain.sequencers`. */
  readonly slots: readonly number[];
  readonly log: Logger;
  /** The forward metrics' hook, fed by the outcome rules. */
  readonly observer?: AttemptObserver | undefined;
}

export class ChainLink {
  readonly chain: ChainConfig;
  readonly log: Logger;
  /**
   * The chain's own RPC (`chains[].rpc`), else null: the one client of it on this thread, for the
   * forward's lookups, the sync send's receipts and the chain's tracker. It is no sequencer: nothing marks it down.
   */
  readonly rpc: ChainRpc | null;
  /** The express lane's endpoint (`expressLane.endpoint`) where the chain enables the lane; else null. */
  readonly expressEndpoint: Upstream | null;
  /** The outcome rules, for every send on this chain. */
  readonly attempts: Attempts;
  private readonly board: HealthSlots;
  private readonly slots: readonly number[];

  constructor(parts: ChainLinkParts) {
    const { chain } = parts;
    this.chain = chain;
    this.log = parts.log;
    this.board = parts.board;
    this.slots = parts.slots;
    const times: CallTimes = { timeoutMs: chain.forward.timeoutMs, queueMs: chain.forward.queueMs };
    this.rpc = chain.rpc === null ? null : new ChainRpc(chain.rpc, Math.max(4, Math.min(chain.sync.maxWaiting, 64)));
    const el = chain.expressLane;
    this.expressEndpoint = el.enabled && el.endpoint !== null ? openUpstream(el.endpoint, { calls: 8, sockets: 1 }) : null;
    this.attempts = new Attempts(chain.chainId, times, this.rpc, parts.log, parts.observer, this.expressEndpoint !== null);
  }

  /** One link per chain, on the chains' slots of `board` (configuration order). */
  static forChains(
    chains: readonly ChainConfig[],
    board: HealthSlots,
    log: Logger,
    observerOf: (chain: ChainConfig) => AttemptObserver | undefined = () => undefined,
  ): ChainLink[] {
    const slots = slotIndex(chains);
    return chains.map((chain, i) => new ChainLink({ chain, board, slots: slots[i]!, log, observer: observerOf(chain) }));
  }

  get chainId(): number {
    return this.chain.chainId;
  }

  /** A client per sequencer, in failover order, on connections of the caller's own; the caller closes them. */
  open(options: OpenOptions): Sequencer[] {
    return this.chain.sequencers.map((url, i) => new Sequencer(openUpstream(url, options), this.board, this.slots[i]!));
  }

  /** Closes the chain RPC's and the express lane endpoint's clients (cutting calls still in flight: their answers have no one to go to). */
  async close(): Promise<void> {
    await Promise.all([this.rpc?.close(), this.expressEndpoint?.close(true)]);
  }
}
