/**
 * Who controls the express lane, round by round, as the auction contract says it: the round clock
 * from `roundTimingInfo()` (read again on `SetRoundTimingInfo`), the controllers from
 * `resolvedRounds()` and the `AuctionResolved` / `SetExpressLaneController` logs, followed by
 * polling the chain RPC (eth_blockNumber, then eth_getLogs over the new blocks, at most
 * `maxLogBlocks` a poll; `resolvedRounds()` read at the same block after any event, on a new
 * round and every 20 polls). A chain RPC that stalls, lies or answers garbage never ends the
 * process: the poll fails, the state it had stays, and once no poll has succeeded for `staleMs`
 * the state is stale, which the lane reads as "not ours" (the plain path).
 *
 * The round number is Nitro's: whole round durations since the offset, on the edge's clock
 * (timeboost/roundtiminginfo.go, RoundNumberAt, in github.com/OffchainLabs/nitro); 0 before it.
 */
import { quantity, hexQuantity as hex } from '../base/rpc-values.js';
import { type ChainRpc, failureText } from '../upstreams/chain-rpc/chain-rpc.js';
import {
  AUCTION_RESOLVED,
  RESOLVED_ROUNDS,
  readAuctionLog,
  readResolvedRounds,
  readRoundTiming,
  ROUND_TIMING_INFO,
  type RoundTiming,
  SET_EXPRESS_LANE_CONTROLLER,
  SET_ROUND_TIMING_INFO,
  ZERO_ADDRESS,
} from './abi.js';

/** What the lane reads the auction with: the chain RPC client's single call (upstreams/chain-rpc/). */
export type AuctionRpc = Pick<ChainRpc, 'one'>;

export interface ControlOptions {
  /** The auction contract, lower-case 0x address. */
  readonly auction: string;
  /** The chain RPC. */
  readonly rpc: AuctionRpc;
  /** Between polls. */
  readonly pollMs: number;
  /** Each read's bound. */
  readonly timeoutMs: number;
  /** After this long without a successful poll the state is stale (not ours). */
  readonly staleMs: number;
  /** The most blocks one eth_getLogs asks for (further blocks: the next polls). */
  readonly maxLogBlocks?: number;
  /** Wall clock for staleness (tests: a fake). */
  readonly wallClock?: () => number;
  /** The round clock's time (ms since the epoch): Date.now, or a test's clock that follows the chain's. */
  readonly clock?: () => number;
  /** A line worth an operator's eye (a poll failing, a round changing hands); never a secret. */
  readonly note?: (msg: string) => void;
}

/** A chain whose auction contract does not answer `roundTimingInfo()`: start refuses it with this one line. */
export class LaneStartError extends Error {
  override name = 'LaneStartError';
}

/** Rounds kept behind the current one (a transfer of an old round cannot happen: RoundTooOld). */
const KEEP_BEHIND = 2;
const MAX_LOGS = 10_000;

/** The round number at `nowMs` (Nitro's RoundNumberAt: saturating at 0 before the offset). */
export function roundAt(t: RoundTiming, nowMs: number): number {
  const since = nowMs - t.offsetSeconds * 1000;
  return since <= 0 ? 0 : Math.floor(since / (t.durationSeconds * 1000));
}

/** Milliseconds until the round in force at `nowMs` ends. */
export function msUntilRoundEnd(t: RoundTiming, nowMs: number): number {
  const end = (t.offsetSeconds + (roundAt(t, nowMs) + 1) * t.durationSeconds) * 1000;
  return end - nowMs;
}

export class RoundControl {
  #timing: RoundTiming;
  readonly #controllers = new Map<number, string>();
  #lastBlock: number;
  #lastGoodMs: number;
  #polls = 0;
  #lastRound = -1;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  /** Polls that failed, logs that were not readable: counted for the status. */
  failures = 0;
  badLogs = 0;
  /** Bumped on each controller event and each controller that changed (the lane's suspension after a refusal ends on it). */
  changes = 0;

  private constructor(
    private readonly o: ControlOptions,
    timing: RoundTiming,
    block: number,
  ) {
    this.#timing = timing;
    this.#lastBlock = block;
    this.#lastGoodMs = this.#wall();
  }

  #wall(): number {
    return (this.o.wallClock ?? Date.now)();
  }

  /**
   * Reads the clock, the head and the resolved rounds once; refuses (LaneStartError, one line)
   * a contract that does not answer `roundTimingInfo()` with a round clock.
   */
  static async open(o: ControlOptions): Promise<RoundControl> {
    const t = await o.rpc.one('eth_call', [{ to: o.auction, data: ROUND_TIMING_INFO }, 'latest'], { timeoutMs: o.timeoutMs });
    const timing = t.kind === 'result' ? readRoundTiming(t.result) : undefined;
    if (timing === undefined) {
      const why = t.kind === 'result' ? 'its answer is not a round clock' : t.kind === 'error' ? 'the call reverts or fails' : `the chain RPC: ${t.why}`;
      throw new LaneStartError(`the auction contract ${o.auction} does not answer roundTimingInfo() (${why})`);
    }
    const b = await o.rpc.one('eth_blockNumber', [], { timeoutMs: o.timeoutMs });
    const block = b.kind === 'result' ? quantity(b.result) : null;
    if (block === null) throw new LaneStartError('the chain RPC does not answer eth_blockNumber with a block number');
    const c = new RoundControl(o, timing, block);
    const why = await c.#readResolved(hex(block), (o.clock ?? Date.now)());
    if (why !== null) throw new LaneStartError(`reading resolvedRounds() failed (${why})`);
    return c;
  }

  get timing(): RoundTiming {
    return this.#timing;
  }

  /** The controller of `round` as last read (lower-case 0x), or undefined (not resolved, or transferred to nobody). */
  controllerOf(round: number): string | undefined {
    const c = this.#controllers.get(round);
    return c === undefined || c === ZERO_ADDRESS ? undefined : c;
  }

  /** True while a poll has succeeded within `staleMs`. */
  fresh(): boolean {
    return this.#wall() - this.#lastGoodMs <= this.o.staleMs;
  }

  get lastBlock(): number {
    return this.#lastBlock;
  }

  /** Starts polling every `pollMs` (one poll at a time). */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      if (this.#running === undefined) this.#running = this.poll().finally(() => (this.#running = undefined));
    }, this.o.pollMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One poll; never throws (a failure is counted and the state kept). */
  async poll(nowMs = (this.o.clock ?? Date.now)()): Promise<void> {
    let why: string | null;
    try {
      why = await this.#poll(nowMs);
    } catch {
      // A bug, never the chain's input (read into values or a failure): counted as a failed poll.
      why = 'unexpected answer';
    }
    if (why === null) {
      this.#lastGoodMs = this.#wall();
      return;
    }
    this.failures++;
    if (this.failures === 1 || this.failures % 100 === 0)
      this.o.note?.(`express lane: reading the auction contract failed (${why}; ${this.failures} failures)`);
  }

  /** One read of the chain RPC: its result, or why there is none (a failure, or `garbage`: not the value asked for). */
  async #read<T>(method: string, params: readonly unknown[], read: (v: unknown) => T | null | undefined): Promise<{ value: T } | string> {
    const a = await this.o.rpc.one(method, params, { timeoutMs: this.o.timeoutMs });
    if (a.kind !== 'result') return failureText(a);
    const value = read(a.result);
    return value === null || value === undefined ? 'garbage' : { value };
  }

  /** One poll: null, or why it failed (the state kept). */
  async #poll(nowMs: number): Promise<string | null> {
    const got = await this.#read('eth_blockNumber', [], quantity);
    if (typeof got === 'string') return got;
    const head = got.value;
    const round = roundAt(this.#timing, nowMs);
    let reread = round !== this.#lastRound || ++this.#polls % 20 === 0;
    this.#lastRound = round;
    if (head < this.#lastBlock) {
      // The chain went back (a reorg, a reset node): what the logs said past the head is unsure.
      this.#lastBlock = head;
      reread = true;
    } else if (head > this.#lastBlock) {
      const to = Math.min(head, this.#lastBlock + (this.o.maxLogBlocks ?? 1000));
      const gotLogs = await this.#read(
        'eth_getLogs',
        [
          {
            address: this.o.auction,
            fromBlock: hex(this.#lastBlock + 1),
            toBlock: hex(to),
            topics: [[AUCTION_RESOLVED, SET_EXPRESS_LANE_CONTROLLER, SET_ROUND_TIMING_INFO]],
          },
        ],
        (v) => (Array.isArray(v) && v.length <= MAX_LOGS ? (v as unknown[]) : null),
      );
      if (typeof gotLogs === 'string') return gotLogs;
      const logs = gotLogs.value;
      let timing = false;
      for (const l of logs) {
        const ev = readAuctionLog(l, this.o.auction);
        if (ev === undefined) {
          this.badLogs++;
          continue;
        }
        if (ev.block > to) continue;
        reread = true;
        if (ev.kind === 'timing') timing = true;
        else this.#set(ev.round, ev.controller, nowMs, true);
      }
      if (timing) {
        const got = await this.#read('eth_call', [{ to: this.o.auction, data: ROUND_TIMING_INFO }, hex(to)], readRoundTiming);
        if (typeof got === 'string') return got;
        const t = got.value;
        this.#timing = t;
        this.o.note?.(`express lane: the round clock changed (offset ${t.offsetSeconds} s, rounds of ${t.durationSeconds} s)`);
      }
      const why = reread ? await this.#readResolved(hex(to), nowMs) : null;
      if (why === null) this.#lastBlock = to;
      return why;
    }
    return reread ? this.#readResolved('latest', nowMs) : null;
  }

  /** `resolvedRounds()` at `block`: the contract's own word on the latest two rounds (transfers included). */
  async #readResolved(block: string, nowMs: number): Promise<string | null> {
    const got = await this.#read('eth_call', [{ to: this.o.auction, data: RESOLVED_ROUNDS }, block], readResolvedRounds);
    if (typeof got === 'string') return got;
    for (const r of got.value) this.#set(r.round, r.controller, nowMs);
    return null;
  }

  #set(round: number, controller: string, nowMs: number, event = false): void {
    // Only rounds that can matter: none is sold beyond the next one, none transferred once past
    // (a round far ahead is a lie, and would push the real ones out).
    const current = roundAt(this.#timing, nowMs);
    if (round > current + 2 || round < current - KEEP_BEHIND) return;
    if (event || this.#controllers.get(round) !== controller) this.changes++;
    this.#controllers.set(round, controller);
    for (const r of this.#controllers.keys()) if (r < current - KEEP_BEHIND || r > current + 2) this.#controllers.delete(r);
  }
}
