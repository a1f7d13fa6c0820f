/**
 * The express lanes of a process, one per chain that turns `expressLane.enabled` on: what the
 * forward calls (see lane.ts for the protocol).
 *
 *   const lanes = await ExpressLanes.open(config.chains);       // LaneStartError / KeyError: one line
 *   lanes.submissionFor(chainId, rawTxHex, account, now)          // null: the plain path
 *   lanes.status()                                                // per chain: round, controller, controlled
 *
 * With no chain enabled, `submissionFor` is one Map lookup that finds nothing.
 */
import type { ExpressLaneConfig } from './config.js';
import { LaneStartError } from './control.js';
import { KeyError, loadControllerKey } from './key.js';
import { ExpressLane, type Granted, type LaneOptions, type LaneStatus, type LaneSubmission } from './lane.js';
import { upstreamLabel } from '../upstreams/upstream.js';

export interface LaneChain {
  readonly chainId: number;
  readonly rpc: string | null;
  readonly expressLane: ExpressLaneConfig;
}

export interface OpenOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly clock?: LaneOptions['clock'];
  readonly note?: LaneOptions['note'];
}

export class ExpressLanes {
  private constructor(readonly byChain: ReadonlyMap<number, ExpressLane>) {}

  /** No lane at all (nothing configured). */
  static readonly none = new ExpressLanes(new Map());

  /**
   * Opens the lane of each chain that enables it: its key, then the auction's state. Any failure
   * closes what was opened and rejects with one line naming the chain (never the key).
   */
  static async open(chains: readonly LaneChain[], o: OpenOptions = {}): Promise<ExpressLanes> {
    const lanes = new Map<number, ExpressLane>();
    try {
      for (const [i, c] of chains.entries()) {
        const cfg = c.expressLane;
        if (!cfg.enabled) continue;
        const where = `chains[${i}].expressLane`;
        if (c.rpc === null) throw new LaneStartError(`${where}: chains[${i}].rpc is required`);
        let key: ReturnType<typeof loadControllerKey>;
        try {
          key = loadControllerKey(cfg.keyFile !== null ? { file: cfg.keyFile } : { env: cfg.keyEnv ?? '' }, o.env);
        } catch (e) {
          throw new LaneStartError(`${where}: ${e instanceof KeyError ? e.message : 'the key could not be read'}`);
        }
        try {
          lanes.set(c.chainId, await ExpressLane.open({ chainId: c.chainId, config: cfg, rpcUrl: c.rpc, key, ...o }));
        } catch (e) {
          const why = e instanceof LaneStartError ? e.message : 'could not start';
          throw new LaneStartError(`${where}: ${why} (chain RPC ${upstreamLabel(c.rpc)})`);
        }
      }
    } catch (e) {
      await Promise.all([...lanes.values()].map((l) => l.close()));
      throw e;
    }
    return new ExpressLanes(lanes);
  }

  /** The wrapped submission for `rawTxHex` on chain `chainId`, or null: the plain path. */
  submissionFor(chainId: number, rawTxHex: string, account: Granted, nowMs?: number, options?: string): LaneSubmission | null {
    const lane = this.byChain.get(chainId);
    return lane === undefined ? null : lane.submissionFor(rawTxHex, account, nowMs, options);
  }

  /** Whether `account`'s submission on chain `chainId` would be wrapped now (lane.ts `wouldWrap`). */
  wouldWrap(chainId: number, account: Granted, nowMs?: number): boolean {
    const lane = this.byChain.get(chainId);
    return lane?.wouldWrap(account, nowMs) === true;
  }

  /** Each lane's state by chain id (for /ready's detail and the metrics: controlled 0/1, the round). */
  status(nowMs?: number): Map<number, LaneStatus> {
    return new Map([...this.byChain].map(([chain, lane]) => [chain, lane.status(nowMs)]));
  }

  async close(): Promise<void> {
    await Promise.all([...this.byChain.values()].map((l) => l.close()));
  }
}
