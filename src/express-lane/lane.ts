/**
 * One chain's express lane: whether a submission is wrapped, and how.
 *
 *   const lane = await ExpressLane.open({ chainId, config, rpcUrl, key });   // LaneStartError: one line
 *   const sub = lane.submissionFor(rawTxHex, account, Date.now());
 *   if (sub === null) → the plain path, as without the lane;
 *   else the forward (forward/express-send.ts) sends it through the endpoint's upstream, which the
 *   chain's link holds, and reads the answer:
 *        const reading = readLaneUpstream(await endpoint.call(sub.method, sub.paramsJson, times))
 *        sub.release(reading)                          (exactly once: sequence numbers, control)
 *        reading.kind === 'queued'        → taken into the round's queue, NOT accepted: confirm
 *                                           the hash by a lookup (502 uncertain with the hash if not found)
 *        reading.kind === 'not-sequenced' → the plain path with the same bytes
 *        reading.kind === 'unknown'       → the bytes may be in the lane: uncertain, never definite
 *
 * `submissionFor` wraps only when all hold: the account's grant for the chain has `expressLane`;
 * the auction state is fresh; the controller the contract names for the current round is this
 * lane's key; the round does not end within `marginMs`; the endpoint has not refused the round
 * as not ours within `backoffMs` (and since the contract last named a controller); in the `ordered` mode, a number
 * within the future limit is free. It costs a Map lookup and a field read when the grant lacks
 * `expressLane`; a wrapped submission costs one secp256k1 signature and two keccak passes.
 */
import { ChainRpc } from '../upstreams/chain-rpc/chain-rpc.js';
import type { LaneReading } from './answer.js';
import type { ExpressLaneConfig } from './config.js';
import { type AuctionRpc, msUntilRoundEnd, RoundControl, roundAt } from './control.js';
import type { ControllerKey } from './key.js';
import { OrderedSequence } from './sequence.js';
import { DONT_CARE_SEQUENCE, SEND_METHOD, submissionParams } from './submission.js';

export interface LaneSubmission {
  readonly method: typeof SEND_METHOD;
  /** The JSON text of the params array. */
  readonly paramsJson: string;
  readonly round: number;
  /** The sequence number (2^64−1: don't care). */
  readonly seq: bigint;
  /** What the endpoint's answer meant; call once (later calls are ignored). */
  release(reading: LaneReading): void;
}

export interface LaneStatus {
  readonly round: number;
  /** The controller of the current round as the contract names it (lower-case 0x), or null. */
  readonly controller: string | null;
  readonly nextController: string | null;
  /** This lane's controller address (public). */
  readonly ours: string;
  /** Whether a granted submission would be wrapped now. */
  readonly controlled: boolean;
  readonly fresh: boolean;
  readonly msUntilRoundEnd: number;
  readonly lastBlock: number;
  readonly readFailures: number;
}

export interface LaneOptions {
  readonly chainId: number;
  readonly config: ExpressLaneConfig;
  /** The chain RPC the auction contract is read from. */
  readonly rpcUrl: string;
  readonly key: ControllerKey;
  /** The round clock (ms since the epoch): Date.now by default; a test's clock that follows the chain's. */
  readonly clock?: (() => number) | undefined;
  readonly note?: ((msg: string) => void) | undefined;
  /** The reader to use instead of opening a client of `rpcUrl` (tests). */
  readonly rpc?: AuctionRpc;
}

/**
 * What the lane reads of an account: its grants by chain id, each saying whether it may use the
 * express lane (accounts/types.ts's Account is one; named here so that the lane needs no other
 * domain folder).
 */
export interface Granted {
  readonly grants: ReadonlyMap<number, { readonly expressLane: boolean }>;
}

const RAW_HEX = /^0x(?:[0-9a-fA-F]{2})+$/;

export class ExpressLane {
  readonly #seq: OrderedSequence | null;
  readonly #chainId: bigint;
  readonly #auction: string;
  #suspendedRound = -1;
  #suspendedAt = -1;
  #suspendedUntil = 0;

  private constructor(
    private readonly o: LaneOptions,
    readonly control: RoundControl,
    /** The chain RPC client this lane opened (closed with it), or null (the caller's). */
    private readonly rpc: ChainRpc | null,
  ) {
    this.#seq = o.config.sequence === 'ordered' ? new OrderedSequence(o.config.maxFutureDistance) : null;
    this.#chainId = BigInt(o.chainId);
    this.#auction = o.config.auction ?? '';
  }

  /** Reads the auction's state once and starts following it; LaneStartError (one line) when the contract does not answer. */
  static async open(o: LaneOptions): Promise<ExpressLane> {
    const c = o.config;
    if (c.auction === null || c.endpoint === null) throw new Error('expressLane: auction and endpoint are required');
    const own = o.rpc === undefined ? new ChainRpc(o.rpcUrl, 2) : null;
    const rpc = own ?? o.rpc!;
    let control: RoundControl;
    try {
      control = await RoundControl.open({
        auction: c.auction,
        rpc,
        pollMs: c.pollMs,
        timeoutMs: c.timeoutMs,
        staleMs: c.staleMs,
        ...(o.clock === undefined ? {} : { clock: o.clock }),
        ...(o.note === undefined ? {} : { note: o.note }),
      });
    } catch (e) {
      await own?.close();
      throw e;
    }
    control.start();
    return new ExpressLane(o, control, own);
  }

  #now(): number {
    return (this.o.clock ?? Date.now)();
  }

  /** Whether this lane's controller holds the round in force at `nowMs`, far enough from its end. */
  controlled(nowMs = this.#now()): boolean {
    const c = this.control;
    if (!c.fresh()) return false;
    const round = roundAt(c.timing, nowMs);
    if (c.controllerOf(round) !== this.o.key.address) return false;
    if (msUntilRoundEnd(c.timing, nowMs) <= this.o.config.marginMs) return false;
    // After the endpoint refused the round as not ours: not until `backoffMs` passed or the contract
    // named a controller again (the sequencer may learn of a resolution or a transfer a little
    // after the edge; its clock may be a little off at a round's start).
    return !(round === this.#suspendedRound && c.changes === this.#suspendedAt && nowMs < this.#suspendedUntil);
  }

  /**
   * Whether `account`'s submission would be wrapped now (its grant, and the round ours): what a
   * send that must choose its method before the forward asks (the sync send, sync/sync-send.ts).
   * Takes no sequence number; the forward's own `submissionFor` still decides.
   */
  wouldWrap(account: Granted, nowMs = this.#now()): boolean {
    return account.grants.get(this.o.chainId)?.expressLane === true && this.controlled(nowMs);
  }

  /** The wrapped submission for `rawTxHex` (with its conditions' `options` as JSON, else null), or null: the plain path. */
  submissionFor(rawTxHex: string, account: Granted, nowMs = this.#now(), options?: string): LaneSubmission | null {
    if (account.grants.get(this.o.chainId)?.expressLane !== true) return null;
    if (!this.controlled(nowMs) || !RAW_HEX.test(rawTxHex)) return null;
    const round = roundAt(this.control.timing, nowMs);
    const seq = this.#seq === null ? DONT_CARE_SEQUENCE : this.#seq.take(round);
    if (seq === null) return null;
    const fields = { chainId: this.#chainId, auction: this.#auction, round: BigInt(round), sequence: seq, tx: Buffer.from(rawTxHex.slice(2), 'hex') };
    const paramsJson = submissionParams(fields, rawTxHex, this.o.key, options);
    let released = false;
    return {
      method: SEND_METHOD,
      paramsJson,
      round,
      seq,
      release: (reading) => {
        if (released) return;
        released = true;
        if (this.#seq !== null && seq !== DONT_CARE_SEQUENCE) this.#seq.release(round, seq, reading);
        if (reading.kind === 'not-sequenced' && reading.lostControl) {
          this.#suspendedRound = round;
          this.#suspendedAt = this.control.changes;
          this.#suspendedUntil = this.#now() + this.o.config.backoffMs;
          this.o.note?.(
            `express lane: the endpoint refused round ${round} (${reading.code}); the plain path for ${this.o.config.backoffMs} ms or until the contract names its controller again`,
          );
        }
      },
    };
  }

  status(nowMs = this.#now()): LaneStatus {
    const c = this.control;
    const round = roundAt(c.timing, nowMs);
    return {
      round,
      controller: c.controllerOf(round) ?? null,
      nextController: c.controllerOf(round + 1) ?? null,
      ours: this.o.key.address,
      controlled: this.controlled(nowMs),
      fresh: c.fresh(),
      msUntilRoundEnd: msUntilRoundEnd(c.timing, nowMs),
      lastBlock: c.lastBlock,
      readFailures: c.failures,
    };
  }

  async close(): Promise<void> {
    await this.control.stop();
    await this.rpc?.close();
  }
}
