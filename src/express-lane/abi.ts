/**
 * The few words of the ExpressLaneAuction contract (@arbitrum/nitro-contracts,
 * src/express-lane-auction/IExpressLaneAuction.sol) the edge reads, and readers of what a chain
 * RPC answers for them. A chain RPC is a peer: every reader takes `unknown` and returns a value
 * or undefined, never throws, and bounds what it reads (no answer is trusted to be well formed).
 */
import { quantity } from '../base/rpc-values.js';

/** `roundTimingInfo()`: (int64 offsetTimestamp, uint64 roundDurationSeconds, uint64 auctionClosingSeconds, uint64 reserveSubmissionSeconds). */
export const ROUND_TIMING_INFO = '0x0152682d';
/** `resolvedRounds()`: two (address expressLaneController, uint64 round), the latest first. */
export const RESOLVED_ROUNDS = '0x0d253fbe';
/** `AuctionResolved(bool indexed, uint64 round, address indexed bidder, address indexed controller, uint256, uint256, uint64, uint64)`. */
export const AUCTION_RESOLVED = '0x7f5bdabbd27a8fc572781b177055488d7c6729a2bade4f57da9d200f31c15d47';
/** `SetExpressLaneController(uint64 round, address indexed previous, address indexed new, address indexed transferor, uint64, uint64)`. */
export const SET_EXPRESS_LANE_CONTROLLER = '0xb59adc820ca642dad493a0a6e0bdf979dcae037dea114b70d5c66b1c0b791c4b';
/** `SetRoundTimingInfo(uint64 currentRound, int64 offset, uint64 duration, uint64 closing, uint64 reserveSubmission)`. */
export const SET_ROUND_TIMING_INFO = '0x982cfb73783b8c64455c76cdeb1351467c4f1e6b3615fec07df232c1b46ffd47';

/** The round clock as the contract keeps it, in seconds. */
export interface RoundTiming {
  readonly offsetSeconds: number;
  readonly durationSeconds: number;
  readonly closingSeconds: number;
  readonly reserveSubmissionSeconds: number;
}

/** The controller of one round (lower-case 0x address). */
export interface RoundController {
  readonly round: number;
  readonly controller: string;
}

/** One log of the auction contract that changes who controls a round, or the clock. */
export type AuctionEvent =
  | { readonly kind: 'controller'; readonly round: number; readonly controller: string; readonly block: number }
  | { readonly kind: 'timing'; readonly block: number };

const HEX_WORDS = /^0x(?:[0-9a-fA-F]{64})+$/;
export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
/** Far beyond any round or second a real contract holds: a bigger one is a lie, not a round. */
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const TWO_63 = 1n << 63n;
const TWO_64 = 1n << 64n;

/** The 32-byte words of an ABI answer, or undefined (not 0x + whole words, or more than `max`). */
export function words(v: unknown, max: number): bigint[] | undefined {
  if (typeof v !== 'string' || v.length > 2 + 64 * max || !HEX_WORDS.test(v)) return undefined;
  const out: bigint[] = [];
  for (let i = 2; i < v.length; i += 64) out.push(BigInt(`0x${v.slice(i, i + 64)}`));
  return out;
}

/** A uint64 word as a safe integer, or undefined. */
const u64 = (w: bigint | undefined): number | undefined => (w === undefined || w >= TWO_64 || w > MAX_SAFE ? undefined : Number(w));

/** A word holding an address (upper 12 bytes zero) as lower-case 0x hex, or undefined. */
export function addressWord(w: bigint | undefined): string | undefined {
  if (w === undefined || w >> 160n !== 0n) return undefined;
  return `0x${w.toString(16).padStart(40, '0')}`;
}

/** A 32-byte topic holding an address, or undefined. */
const topicAddress = (t: unknown): string | undefined => {
  const w = words(t, 1);
  return w === undefined ? undefined : addressWord(w[0]);
};

/**
 * `roundTimingInfo()`'s answer, or undefined where it is not one a contract could hold: four
 * words, a non-negative int64 offset, a duration of at least a second, windows that fit in it
 * (the contract's own rule: closing + reserve submission ≤ duration).
 */
export function readRoundTiming(v: unknown): RoundTiming | undefined {
  const w = words(v, 4);
  if (w === undefined || w.length !== 4) return undefined;
  const offsetWord = w[0]!;
  // int64, sign-extended to 256 bits: a negative offset is never initialised (NegativeOffset).
  if (offsetWord >= TWO_63) return undefined;
  const offsetSeconds = u64(offsetWord);
  const durationSeconds = u64(w[1]);
  const closingSeconds = u64(w[2]);
  const reserveSubmissionSeconds = u64(w[3]);
  if (offsetSeconds === undefined || durationSeconds === undefined || closingSeconds === undefined || reserveSubmissionSeconds === undefined) return undefined;
  if (durationSeconds < 1 || durationSeconds > 86_400 * 366 || closingSeconds + reserveSubmissionSeconds > durationSeconds) return undefined;
  return { offsetSeconds, durationSeconds, closingSeconds, reserveSubmissionSeconds };
}

/**
 * `resolvedRounds()`'s answer: the (up to two) rounds resolved, latest first; an entry of round 0
 * (never resolved: the first round sold is 1) is left out; a controller of 0x0 (a round
 * transferred to nobody) is kept, and means no controller. Undefined where it is not four words.
 */
export function readResolvedRounds(v: unknown): RoundController[] | undefined {
  const w = words(v, 4);
  if (w === undefined || w.length !== 4) return undefined;
  const out: RoundController[] = [];
  for (const i of [0, 2]) {
    const controller = addressWord(w[i]);
    const round = u64(w[i + 1]);
    if (controller === undefined || round === undefined) return undefined;
    if (round !== 0) out.push({ round, controller });
  }
  return out;
}

/**
 * One log of `eth_getLogs` as an auction event of the contract at `address`, or undefined (not
 * one of ours, or malformed: the caller counts it and goes on).
 */
export function readAuctionLog(log: unknown, address: string): AuctionEvent | undefined {
  if (typeof log !== 'object' || log === null) return undefined;
  const l = log as { address?: unknown; topics?: unknown; data?: unknown; blockNumber?: unknown; removed?: unknown };
  if (typeof l.address !== 'string' || l.address.toLowerCase() !== address || l.removed === true) return undefined;
  const block = quantity(l.blockNumber);
  if (block === null || !Array.isArray(l.topics) || l.topics.length === 0 || l.topics.length > 4) return undefined;
  const topic0 = typeof l.topics[0] === 'string' ? l.topics[0].toLowerCase() : '';
  if (topic0 === SET_ROUND_TIMING_INFO) return { kind: 'timing', block };
  const data = words(l.data, 8);
  if (data === undefined || l.topics.length !== 4) return undefined;
  if (topic0 === AUCTION_RESOLVED) {
    // data: round, firstPriceAmount, price, roundStart, roundEnd; topic 3: the controller.
    const round = u64(data[0]);
    const controller = topicAddress(l.topics[3]);
    if (data.length !== 5 || round === undefined || controller === undefined) return undefined;
    return { kind: 'controller', round, controller, block };
  }
  if (topic0 === SET_EXPRESS_LANE_CONTROLLER) {
    // data: round, startTimestamp, endTimestamp; topic 2: the new controller.
    const round = u64(data[0]);
    const controller = topicAddress(l.topics[2]);
    if (data.length !== 3 || round === undefined || controller === undefined) return undefined;
    return { kind: 'controller', round, controller, block };
  }
  return undefined;
}
