/**
 * The express lane submission exactly as Nitro defines it (github.com/OffchainLabs/nitro,
 * timeboost/types.go: ExpressLaneSubmission, ToMessageBytes, Sender; JsonExpressLaneSubmission):
 *
 *   message = keccak256("TIMEBOOST_BID")        32 bytes (domainValue, timeboost/auctioneer.go)
 *           ‖ chainId                           32 bytes, big-endian, left-padded (padBigInt)
 *           ‖ auctionContractAddress            20 bytes
 *           ‖ round                              8 bytes, big-endian
 *           ‖ sequenceNumber                     8 bytes, big-endian
 *           ‖ transaction                       its binary encoding (types.Transaction.MarshalBinary:
 *                                               the bytes eth_sendRawTransaction carries)
 *   signature = the EIP-191 (personal_sign) signature of message: keccak256("\x19Ethereum Signed
 *               Message:\n" ‖ len(message) ‖ message), r ‖ s ‖ v, v = 27 + recovery id (Sender
 *               takes 27/28 and 0/1 alike)
 *
 * sent as the one parameter of `timeboost_sendExpressLaneTransaction`
 * (execution/gethexec/api.go, SendExpressLaneTransaction): an object of chainId (hexutil.Big),
 * round and sequenceNumber (hexutil.Uint64: 0x and no leading zero), auctionContractAddress,
 * transaction and signature (0x hex bytes) and options (ConditionalOptions; null: none).
 * The sequence number 2^64 − 1 is Nitro's DontCareSequence (timeboost/express_lane_service.go):
 * the submission goes to the queue at once, outside the round's ordering.
 */
import { keccak256 } from '../base/native.js';
import type { ControllerKey } from './key.js';

export const DONT_CARE_SEQUENCE = (1n << 64n) - 1n;
export const SEND_METHOD = 'timeboost_sendExpressLaneTransaction';

/** keccak256("TIMEBOOST_BID"). */
const DOMAIN = Buffer.from('9084724c228262e73bca3e634271c0ee7fb3a333a2c20d5b0f6a4f0c7abc4958', 'hex');

export interface SubmissionFields {
  readonly chainId: bigint;
  /** Lower-case 0x address. */
  readonly auction: string;
  readonly round: bigint;
  readonly sequence: bigint;
  /** The signed transaction's bytes, as eth_sendRawTransaction carries them. */
  readonly tx: Uint8Array;
}

const beBytes = (v: bigint, n: number): Buffer => {
  if (v < 0n || v >> BigInt(8 * n) !== 0n) throw new RangeError(`value does not fit in ${n} bytes`);
  return Buffer.from(v.toString(16).padStart(2 * n, '0'), 'hex');
};

/** Nitro's ToMessageBytes. */
export function messageBytes(f: SubmissionFields): Uint8Array {
  return Buffer.concat([DOMAIN, beBytes(f.chainId, 32), Buffer.from(f.auction.slice(2), 'hex'), beBytes(f.round, 8), beBytes(f.sequence, 8), f.tx]);
}

/** The EIP-191 hash of `message` (what Sender recovers from). */
export function personalHash(message: Uint8Array): Uint8Array {
  return keccak256(Buffer.concat([Buffer.from(`\x19Ethereum Signed Message:\n${message.length}`, 'latin1'), message]));
}

/** The 65-byte signature of the submission by `key`. */
export function signSubmission(f: SubmissionFields, key: ControllerKey): Uint8Array {
  return key.sign(personalHash(messageBytes(f)));
}

const quantity = (v: bigint): string => `0x${v.toString(16)}`;

/**
 * The JSON text of the params array (`[{…}]`) of timeboost_sendExpressLaneTransaction, signed.
 * `txHex` is the transaction as the client sent it (0x hex; its case is kept); `options` the
 * conditions as JSON (eth_sendRawTransactionConditional's, src/conditional/), else null. They are
 * not part of the signed message (ToMessageBytes).
 */
export function submissionParams(f: SubmissionFields, txHex: string, key: ControllerKey, options = 'null'): string {
  const sig = Buffer.from(signSubmission(f, key)).toString('hex');
  return (
    `[{"chainId":"${quantity(f.chainId)}","round":"${quantity(f.round)}","auctionContractAddress":"${f.auction}",` +
    `"transaction":"${txHex}","options":${options},"sequenceNumber":"${quantity(f.sequence)}","signature":"0x${sig}"}]`
  );
}
