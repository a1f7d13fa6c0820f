/**
 * What the express lane endpoint's answer to `timeboost_sendExpressLaneTransaction` means, in
 * outcome terms. The errors are Nitro's (github.com/OffchainLabs/nitro): timeboost/errors.go
 * (MALFORMED_DATA, WRONG_CHAIN_ID, BAD_ROUND_NUMBER, NO_ONCHAIN_CONTROLLER,
 * WRONG_AUCTION_CONTRACT, NOT_EXPRESS_LANE_CONTROLLER, SEQUENCE_NUMBER_ALREADY_SEEN,
 * SEQUENCE_NUMBER_TOO_LOW, OVERSIZED_DATA), the future-sequence limit's message
 * (timeboost/express_lane_service.go, SequenceExpressLaneSubmission), "timeboost not enabled" and
 * "express lane service not enabled" (execution/gethexec/sequencer.go,
 * PublishExpressLaneTransaction), "missing required parameter" (execution/gethexec/api.go). Each
 * is returned before the submission is stored or queued (ValidateExpressLaneTx in
 * timeboost/express_lane_tracker.go, then the checks at the top of SequenceExpressLaneSubmission),
 * so the bytes were not sequenced by this submission: the plain path may carry the same bytes
 * (the same hash: it can only land once). JSON-RPC's own -32700/-32600/-32601/-32602 likewise
 * come before any handler ran.
 *
 * `null` is NOT an acceptance: it says the transaction was taken into the round's queue (Nitro
 * drops an express lane transaction not included within `queue-timeout-in-blocks` blocks), so
 * the hash is to be confirmed by a lookup. Any other answer (another error, a result that is not
 * null, garbage, a timeout, a closed connection) leaves the bytes possibly in the lane: unknown.
 */

/** A Nitro refusal that proves the submission was not stored. */
export type NotSequencedCode =
  | 'MALFORMED_DATA'
  | 'OVERSIZED_DATA'
  | 'WRONG_CHAIN_ID'
  | 'WRONG_AUCTION_CONTRACT'
  | 'BAD_ROUND_NUMBER'
  | 'NO_ONCHAIN_CONTROLLER'
  | 'NOT_EXPRESS_LANE_CONTROLLER'
  | 'SEQUENCE_NUMBER_TOO_LOW'
  | 'SEQUENCE_NUMBER_ALREADY_SEEN'
  | 'SEQUENCE_NUMBER_LIMIT'
  | 'LANE_NOT_SERVED'
  | 'REQUEST_REFUSED';

export type LaneReading =
  /** `null`: taken into the round's queue; the hash is confirmed by a lookup, not by this. */
  | { readonly kind: 'queued' }
  /** Proven not stored: fall back to the plain path with the same bytes. */
  | { readonly kind: 'not-sequenced'; readonly code: NotSequencedCode; readonly lostControl: boolean }
  /** Anything else: the bytes may be in the lane. */
  | { readonly kind: 'unknown'; readonly why: string };

const CODES =
  /\b(MALFORMED_DATA|OVERSIZED_DATA|WRONG_CHAIN_ID|WRONG_AUCTION_CONTRACT|BAD_ROUND_NUMBER|NO_ONCHAIN_CONTROLLER|NOT_EXPRESS_LANE_CONTROLLER|SEQUENCE_NUMBER_TOO_LOW|SEQUENCE_NUMBER_ALREADY_SEEN)\b/;
/** The future-sequence limit (express_lane_service.go): "message sequence number has reached max allowed limit. SequenceNumber: …". */
const LIMIT = 'message sequence number has reached max allowed limit';
const LANE_OFF = /^(?:timeboost not enabled|express lane service not enabled)$/;
/** Codes that say the round is not ours (or not the one we signed for): stop wrapping until the contract says otherwise. */
const LOST: ReadonlySet<string> = new Set(['BAD_ROUND_NUMBER', 'NO_ONCHAIN_CONTROLLER', 'NOT_EXPRESS_LANE_CONTROLLER']);

const unknown = (why: string): LaneReading => ({ kind: 'unknown', why });
const notSequenced = (code: NotSequencedCode): LaneReading => ({ kind: 'not-sequenced', code, lostControl: LOST.has(code) });

/** A JSON-RPC error object (code, message) read into outcome terms. */
export function readLaneError(code: unknown, message: unknown): LaneReading {
  if (code === -32700 || code === -32600 || code === -32602) return notSequenced('REQUEST_REFUSED');
  if (code === -32601) return notSequenced('LANE_NOT_SERVED');
  if (typeof message !== 'string') return unknown('an error without a message');
  const m = message.length > 2000 ? message.slice(0, 2000) : message;
  const c = CODES.exec(m);
  if (c !== null) return notSequenced(c[1] as NotSequencedCode);
  if (m.startsWith(LIMIT)) return notSequenced('SEQUENCE_NUMBER_LIMIT');
  if (LANE_OFF.test(m)) return notSequenced('LANE_NOT_SERVED');
  if (m === 'missing required parameter') return notSequenced('REQUEST_REFUSED');
  return unknown('an error that does not prove the bytes were not sequenced');
}
