/**
 * Decode and verify a signed transaction, and name precisely why one is refused.
 *
 * Two paths that must agree (tests hold them to the 168 Ethereum test vectors, to every test
 * transaction and to random mutations):
 * - the reference path: @ethereumjs/tx's own constructors (with the native crypto of
 *   crypto.ts), used for legacy, 0x01 and 0x04 envelopes;
 * - the lean path for 0x02 (EIP-1559, the recommended envelope): the same checks over
 *   @ethereumjs/rlp without building a transaction object, hashing the signing payload straight
 *   out of the raw bytes (no re-encoding) and recovering with libsecp256k1 directly (or, with
 *   `crypto.signature: "curve"`, checking that r is a curve point's x-coordinate and recovering
 *   only when the sender is asked for). It is used only when the chain's fork activates no EIP it
 *   does not model (else the reference path).
 *
 * Policy checks shared by both paths, before either runs: blob (0x03) and unknown type bytes
 * are refused, an envelope the grant does not list is refused, the chain id must be the
 * chain's, and a legacy transaction must carry an EIP-155 chain id unless `allowUnprotected`.
 */
import { RLP } from '@ethereumjs/rlp';
import { orError } from '../base/or-error.js';
import type { Common } from '@ethereumjs/common';
import type { SignatureCheck } from '../config/config-schema.js';
import { reject, REJECT, type Exit } from '../base/errors.js';
import { chainCommon, NATIVE_CRYPTO } from './crypto.js';
import { Lean1559 } from './lean1559.js';
import { referenceDecode } from './reference.js';
import { chainMismatch, invalid } from './refuse.js';
import { type Bytes, Items, splitItems, splitList, toBig, toBigAt, uintAt, type Values } from './rlp.js';
import { isSolanaWireTransaction } from './solana.js';
import type { DecodedTx } from './types.js';

export { splitList };

/** EIPs whose rules the lean path does not model: when active, the reference path is used. */
const LEAN_UNMODELLED_EIPS = [2780, 7976, 7981, 8037];

/** Field counts (unsigned, signed) per envelope. */
const FIELDS: Record<number, readonly [number, number]> = { 0: [6, 9], 1: [8, 11], 2: [9, 12], 4: [10, 13] };
/** Fields that must be RLP lists, by type: the access list (then the authorization list). */
const LIST_FIELDS: Record<number, readonly number[]> = { 1: [7], 2: [8], 4: [8, 9] };

const CHAIN_ID_NOT_BYTES = 'chainId must be a byte string';
const CHAIN_ID_LEADING_ZEROS = 'chainId has leading zeros';
const ACCESS_LIST_NOT_LIST = 'accessList must be a list';
const wrongFieldCount = (type: number, got: number): string => `expected ${FIELDS[type]![1]} fields for type ${type}, got ${got}`;
const typeNotAccepted = (type: number): Exit => reject('unsupported_tx_type', `Transaction type 0x0${type} is not accepted for this account`);

export interface DecodePolicy {
  /** Envelope types accepted (0 = legacy EIP-155). */
  readonly txTypes: ReadonlySet<number>;
  /** Accept legacy transactions without EIP-155 (only for decoding test vectors). */
  readonly allowUnprotected?: boolean;
}

export class TxDecoder {
  readonly common: Common;
  readonly chainId: bigint;
  /** Whether 0x02 goes through the lean path on this chain's fork. */
  readonly lean: boolean;
  /** How the lean path checks signatures (config `crypto.signature`, `curve` by default); the reference path always recovers. */
  readonly signature: SignatureCheck;
  private readonly lean1559: Lean1559;
  /** The chain id as a number, for the lean path's comparison. */
  private readonly chainIdNumber: number;
  /** The lean path's items of the signed list, read in place (reused: decoding is synchronous). */
  private readonly items = new Items(12);

  constructor(chainId: number, hardfork: string, opts: { lean?: boolean; signature?: SignatureCheck } = {}) {
    this.common = chainCommon(chainId, hardfork, NATIVE_CRYPTO);
    this.chainId = BigInt(chainId);
    this.chainIdNumber = chainId;
    this.signature = opts.signature ?? 'curve';
    const c = this.common;
    this.lean = (opts.lean ?? true) && c.isActivatedEIP(1559) && !LEAN_UNMODELLED_EIPS.some((e) => c.isActivatedEIP(e));
    this.lean1559 = new Lean1559(c, this.chainId, this.signature);
  }

  /** Decodes and verifies; the tx hash (keccak of the raw bytes) is computed once, here. */
  decode(bytes: Bytes, policy: DecodePolicy): DecodedTx | Exit {
    if (bytes.length === 0) return invalid('empty');
    const b0 = bytes[0]!;
    let type: number;
    if (b0 >= 0xc0) type = 0;
    else if (b0 === 1 || b0 === 2 || b0 === 4) type = b0;
    else {
      if (isSolanaWireTransaction(bytes)) return REJECT.solana_transaction;
      if (b0 === 3) return reject('unsupported_tx_type', 'Blob (0x03) transactions are not accepted');
      if (b0 < 0x80) return reject('unsupported_tx_type', `Unknown transaction type 0x${b0.toString(16).padStart(2, '0')}`);
      return invalid('not an RLP list or a typed envelope');
    }

    // The lean path reads the 0x02 list in place (the same strictness as RLP.decode, cheaper:
    // docs/performance.md); anything it refuses goes through RLP.decode below for the precise error.
    if (type === 2 && this.lean && splitItems(bytes, 1, this.items)) return this.decodeLean(bytes, this.items, policy);

    const v = orError(RLP.decode, type === 0 ? bytes : bytes.subarray(1));
    if (v instanceof Error) return this.notEvm(bytes, `malformed RLP (${v.message})`);
    if (!Array.isArray(v)) return this.notEvm(bytes, 'the payload is not an RLP list');
    const values = v as Values;

    const [unsignedCount, signedCount] = FIELDS[type]!;
    if (values.length === unsignedCount) return REJECT.unsigned_transaction;
    if (values.length !== signedCount) return this.notEvm(bytes, wrongFieldCount(type, values.length));

    // Policy: replay protection, envelope, chain.
    if (type === 0) {
      const v = values[6];
      if (!(v instanceof Uint8Array)) return invalid('v must be a byte string');
      const r = values[7];
      const sv = values[8];
      if (r instanceof Uint8Array && sv instanceof Uint8Array && r.length === 0 && sv.length === 0) return REJECT.unsigned_transaction;
      const vb = toBig(v);
      if (vb === 27n || vb === 28n) {
        if (policy.allowUnprotected !== true) return REJECT.replay_unprotected;
      } else if (vb < 35n) return reject('invalid_signature', `Invalid signature: legacy v = ${vb} is neither 27/28 nor EIP-155`);
      else if ((vb - 35n) >> 1n !== this.chainId) return chainMismatch(this.chainId, (vb - 35n) >> 1n);
      if (!policy.txTypes.has(0)) return reject('unsupported_tx_type', 'Legacy transactions are not accepted for this account');
    } else {
      if (!policy.txTypes.has(type)) return typeNotAccepted(type);
      const cid = values[0];
      if (!(cid instanceof Uint8Array)) return invalid(CHAIN_ID_NOT_BYTES);
      if (cid.length > 0 && cid[0] === 0) return invalid(CHAIN_ID_LEADING_ZEROS);
      const signedFor = toBig(cid);
      if (signedFor !== this.chainId) return chainMismatch(this.chainId, signedFor);
    }

    // Both paths: @ethereumjs/tx would take an empty byte string (0x80) where the access list
    // or the authorization list must be an RLP list; the spec does not.
    const lists = LIST_FIELDS[type];
    if (lists !== undefined)
      for (const i of lists) if (!Array.isArray(values[i])) return invalid(i === lists[0] ? ACCESS_LIST_NOT_LIST : 'authorizationList must be a list');

    return this.reference(bytes, type, values);
  }

  /**
   * The policy checks above, in their order, over the 0x02 list read in place (`it`), then the
   * lean path: the same refusals with the same messages.
   */
  private decodeLean(bytes: Bytes, it: Items, policy: DecodePolicy): DecodedTx | Exit {
    if (it.count === 9) return REJECT.unsigned_transaction;
    if (it.count !== 12) return this.notEvm(bytes, wrongFieldCount(2, it.count));
    if (!policy.txTypes.has(2)) return typeNotAccepted(2);
    if (it.lists[0] !== null) return invalid(CHAIN_ID_NOT_BYTES);
    const cs = it.start[0]!;
    const ce = it.end[0]!;
    if (ce > cs && bytes[cs] === 0) return invalid(CHAIN_ID_LEADING_ZEROS);
    if (ce - cs <= 6 ? uintAt(bytes, cs, ce) !== this.chainIdNumber : toBigAt(bytes, cs, ce) !== this.chainId)
      return chainMismatch(this.chainId, toBigAt(bytes, cs, ce));
    if (it.lists[8] === null) return invalid(ACCESS_LIST_NOT_LIST);
    return this.lean1559.validate(bytes, it);
  }

  /** When bytes are not a valid EVM transaction, they may still be a Solana one. */
  private notEvm(bytes: Bytes, why: string): Exit {
    return isSolanaWireTransaction(bytes) ? REJECT.solana_transaction : invalid(why);
  }

  /** The reference path (@ethereumjs/tx), whatever the envelope. */
  reference(bytes: Bytes, type: number, values: Values): DecodedTx | Exit {
    return referenceDecode(this.common, bytes, type, values);
  }
}
