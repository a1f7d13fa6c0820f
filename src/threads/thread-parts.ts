/**
 * What depends on the thread mode, and the one place that branches on it: a single thread keeps
 * its own rate limiter, health board and prober; a worker thread uses the process-wide tables and
 * reads the board the main thread's prober writes (the composition root, app.ts, takes either).
 */
import type { Config } from '../config/config.js';
import { ChainLink } from '../forward/chain-link.js';
import { HealthBoard } from '../health/board.js';
import { HealthProber } from '../health/prober.js';
import { BodyBudget } from '../http/body-budget.js';
import { RateLimiter, type TokenBuckets } from '../limits/rate-limiter.js';
import { type ConnectionCounts, LocalCounts, SharedCounts, SharedRateTable, SharedTxTable } from '../limits/shared-tables.js';
import type { Logger } from '../log/log.js';
import type { SharedParts } from './protocol.js';

export interface ThreadParts {
  readonly limiter: TokenBuckets;
  /** This thread's own rate limiter (to sweep and close), with a single thread. */
  readonly local: RateLimiter | null;
  /** The process-wide transactions in flight (duplicate suppression across threads), with worker threads. */
  readonly txTable: SharedTxTable | null;
  readonly board: HealthBoard;
  /** The sequencer prober, run by the thread that owns the board. */
  readonly prober: HealthProber | null;
  /** Open WebSocket connections per account, per process. */
  readonly counts: ConnectionCounts;
  /** The process-wide budget for bodies being read. */
  readonly bodies: BodyBudget;
}

/** A single thread: its own tables, board and prober. */
export function singleThread(config: Config, log: Logger): ThreadParts {
  const local = new RateLimiter();
  const board = HealthBoard.allocate(slotCount(config));
  return {
    limiter: local,
    local,
    txTable: null,
    board,
    prober: new HealthProber(ChainLink.forChains(config.chains, board, log), log),
    counts: new LocalCounts(),
    bodies: new BodyBudget(BodyBudget.allocate(), config.limits.maxBufferedBodyBytes),
  };
}

/** A worker thread: the process-wide tables, and the board the main thread's prober writes. */
export function workerThread(config: Config, shared: SharedParts): ThreadParts {
  return {
    limiter: new SharedRateTable(shared.rate),
    local: null,
    txTable: new SharedTxTable(shared.tx),
    board: new HealthBoard(shared.health),
    prober: null,
    counts: new SharedCounts(shared.conns),
    bodies: new BodyBudget(shared.bodies, config.limits.maxBufferedBodyBytes),
  };
}

/** Sequencer slots on the health board: one per configured sequencer. */
export function slotCount(config: Config): number {
  return config.chains.reduce((n, c) => n + c.sequencers.length, 0);
}
