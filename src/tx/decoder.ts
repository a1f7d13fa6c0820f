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
import type { Common } from '@ethereumjs/common';
import {
  create1559FeeMarketTxFromBytesArray,
  createAccessList2930TxFromBytesArray,
  createEOACode7702TxFromBytesArray,
  createLegacyTxFromBytesArray,
} from '@ethereumjs/tx';
import type { SignatureCheck } from '../config.js';
import { reject, REJECT, type Exit } from '../errors.js';
import { isCurvePoint, keccak256, keccak256Parts, secp256k1Addon } from '../native.js';
import { chainCommon, NATIVE_CRYPTO } from './crypto.js';
import { isSolanaWireTransaction } from './solana.js';
import type { DecodedTx } from './types.js';

type Bytes = Uint8Array;
type Values = (Bytes | Values)[];

const MAX_UINT64 = (1n << 64n) - 1n;
const MAX_UINT256 = (1n << 256n) - 1n;
/** The order of the secp256k1 group. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** EIPs whose rules the lean path does not model: when active, the reference path is used. */
const LEAN_UNMODELLED_EIPS = [2780, 7976, 7981, 8037];

/** Field counts (unsigned, signed) per envelope. */
const FIELDS: Record<number, readonly [number, number]> = { 0: [6, 9], 1: [8, 11], 2: [9, 12], 4: [10, 13] };
/** Fields that must be RLP lists, by type: the access list (then the authorization list). */
const LIST_FIELDS: Record<number, readonly number[]> = { 1: [7], 2: [8], 4: [8, 9] };

export interface DecodePolicy {
  /** Envelope types accepted (0 = legacy EIP-155). */
  readonly txTypes: ReadonlySet<number>;
  /** Accept legacy transactions without EIP-155 (only for decoding test vectors). */
  readonly allowUnprotected?: boolean;
}

const hex = (b: Bytes): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

function toBig(b: Bytes): bigint {
  if (b.length === 0) return 0n;
  if (b.length <= 6) {
    let n = 0;
    for (let i = 0; i < b.length; i++) n = n * 256 + b[i]!;
    return BigInt(n);
  }
  return BigInt('0x' + hex(b));
}

const invalid = (why: string): Exit => reject('invalid_transaction', `Invalid transaction: ${why}`);

/** Lean-path gas parameters, read once from the chain's Common. */
interface GasParams {
  readonly txGas: bigint;
  readonly zero: bigint;
  readonly nonZero: bigint;
  readonly creation: bigint;
  readonly initCodeWord: bigint;
  readonly alAddress: bigint;
  readonly alSlot: bigint;
  readonly floorPerToken: bigint;
  readonly floor: boolean;
  readonly eip3860: boolean;
  readonly maxInitCodeSize: number;
  readonly gasCap: bigint;
  readonly txGasN: number;
  readonly zeroN: number;
  readonly nonZeroN: number;
  readonly creationN: number;
  readonly initCodeWordN: number;
  readonly alAddressN: number;
  readonly alSlotN: number;
  readonly floorPerTokenN: number;
}

export class TxDecoder {
  readonly common: Common;
  readonly chainId: bigint;
  /** Whether 0x02 goes through the lean path on this chain's fork. */
  readonly lean: boolean;
  /** How the lean path checks signatures (config `crypto.signature`, `curve` by default); the reference path always recovers. */
  readonly signature: SignatureCheck;
  private readonly gas: GasParams;
  /** Scratch buffers for recovery (decoding is synchronous: one request at a time per thread). */
  private readonly sig = new Uint8Array(64);
  private readonly pub = new Uint8Array(65);
  /** 0x02 ‖ r: the compressed point the curve check parses. */
  private readonly point = new Uint8Array(33);

  constructor(chainId: number, hardfork: string, opts: { lean?: boolean; signature?: SignatureCheck } = {}) {
    this.common = chainCommon(chainId, hardfork, NATIVE_CRYPTO);
    this.chainId = BigInt(chainId);
    this.signature = opts.signature ?? 'curve';
    const c = this.common;
    this.lean = (opts.lean ?? true) && c.isActivatedEIP(1559) && !LEAN_UNMODELLED_EIPS.some((e) => c.isActivatedEIP(e));
    const p = (name: string): bigint => {
      try {
        return c.param(name) ?? 0n;
      } catch {
        return 0n; // not defined before the fork that introduces it
      }
    };
    const gas = {
      txGas: p('txGas'),
      zero: p('txDataZeroGas'),
      nonZero: p('txDataNonZeroGas'),
      creation: c.gteHardfork('homestead') ? p('txCreationGas') : 0n,
      initCodeWord: p('initCodeWordGas'),
      alAddress: p('accessListAddressGas'),
      alSlot: p('accessListStorageKeyGas'),
      floorPerToken: p('totalCostFloorPerToken'),
      floor: c.isActivatedEIP(7623),
      eip3860: c.isActivatedEIP(3860),
      maxInitCodeSize: Number(p('maxInitCodeSize')),
      gasCap: c.isActivatedEIP(7825) ? p('maxTransactionGasLimit') : 0n,
    };
    this.gas = {
      ...gas,
      txGasN: Number(gas.txGas),
      zeroN: Number(gas.zero),
      nonZeroN: Number(gas.nonZero),
      creationN: Number(gas.creation),
      initCodeWordN: Number(gas.initCodeWord),
      alAddressN: Number(gas.alAddress),
      alSlotN: Number(gas.alSlot),
      floorPerTokenN: Number(gas.floorPerToken),
    };
  }

  /** Decodes and verifies; the tx hash (keccak of the raw bytes) is computed once, here. */
  decode(bytes: Bytes, policy: DecodePolicy): DecodedTx | Exit {
    if (bytes.length === 0) return invalid('empty');
    const b0 = bytes[0]!;
    let type: number;
    let payload: Bytes;
    if (b0 >= 0xc0) {
      type = 0;
      payload = bytes;
    } else if (b0 === 1 || b0 === 2 || b0 === 4) {
      type = b0;
      payload = bytes.subarray(1);
    } else {
      if (isSolanaWireTransaction(bytes)) return REJECT.solana_transaction;
      if (b0 === 3) return reject('unsupported_tx_type', 'Blob (0x03) transactions are not accepted');
      if (b0 < 0x80) return reject('unsupported_tx_type', `Unknown transaction type 0x${b0.toString(16).padStart(2, '0')}`);
      return invalid('not an RLP list or a typed envelope');
    }

    let values: Values;
    // The lean path splits the 0x02 list itself (the same strictness as RLP.decode, ~2 µs less);
    // anything it refuses goes through RLP.decode below for the precise error.
    const split = type === 2 && this.lean ? splitList(payload) : null;
    if (split !== null) values = split;
    else
      try {
        const v = RLP.decode(payload);
        if (!Array.isArray(v)) return this.notEvm(bytes, 'the payload is not an RLP list');
        values = v as Values;
      } catch (e) {
        return this.notEvm(bytes, `malformed RLP (${(e as Error).message})`);
      }

    const [unsignedCount, signedCount] = FIELDS[type]!;
    if (values.length === unsignedCount) return REJECT.unsigned_transaction;
    if (values.length !== signedCount) return this.notEvm(bytes, `expected ${signedCount} fields for type ${type}, got ${values.length}`);

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
      else if ((vb - 35n) >> 1n !== this.chainId) return REJECT.chain_mismatch;
      if (!policy.txTypes.has(0)) return reject('unsupported_tx_type', 'Legacy transactions are not accepted for this account');
    } else {
      if (!policy.txTypes.has(type)) return reject('unsupported_tx_type', `Transaction type 0x0${type} is not accepted for this account`);
      const cid = values[0];
      if (!(cid instanceof Uint8Array)) return invalid('chainId must be a byte string');
      if (cid.length > 0 && cid[0] === 0) return invalid('chainId has leading zeros');
      if (toBig(cid) !== this.chainId) return REJECT.chain_mismatch;
    }

    // Both paths: @ethereumjs/tx would take an empty byte string (0x80) where the access list
    // or the authorization list must be an RLP list; the spec does not.
    const lists = LIST_FIELDS[type];
    if (lists !== undefined)
      for (const i of lists) if (!Array.isArray(values[i])) return invalid(i === lists[0] ? 'accessList must be a list' : 'authorizationList must be a list');

    if (type === 2 && this.lean) return this.lean1559(bytes, values);
    return this.reference(bytes, type, values);
  }

  /** When bytes are not a valid EVM transaction, they may still be a Solana one. */
  private notEvm(bytes: Bytes, why: string): Exit {
    return isSolanaWireTransaction(bytes) ? REJECT.solana_transaction : invalid(why);
  }

  /** The reference path: @ethereumjs/tx constructors and validation. */
  reference(bytes: Bytes, type: number, values: Values): DecodedTx | Exit {
    const opts = { common: this.common };
    // biome-ignore lint/suspicious/noExplicitAny: four @ethereumjs/tx classes, used through their common methods
    let tx: any;
    try {
      const vals = values as never;
      tx =
        type === 0
          ? createLegacyTxFromBytesArray(vals, opts)
          : type === 1
            ? createAccessList2930TxFromBytesArray(vals, opts)
            : type === 2
              ? create1559FeeMarketTxFromBytesArray(vals, opts)
              : createEOACode7702TxFromBytesArray(vals, opts);
    } catch (e) {
      return classify((e as Error).message);
    }
    if (!tx.isSigned()) return REJECT.unsigned_transaction;
    const errors: string[] = tx.getValidationErrors();
    if (errors.length > 0) return classify(errors.join('; '));
    let from: string;
    try {
      from = tx.getSenderAddress().toString();
    } catch (e) {
      return classify((e as Error).message);
    }
    return {
      type,
      hash: '0x' + hex(keccak256(bytes)),
      sender: () => from,
      chainId: type === 0 ? (tx.common.chainId() as bigint) : (tx.chainId as bigint),
      nonce: tx.nonce,
      to: tx.to === undefined ? null : tx.to.toString(),
      value: tx.value,
      data: tx.data,
      gasLimit: tx.gasLimit,
    };
  }

  /** The lean 0x02 path: the checks of FeeMarket1559Tx + getValidationErrors, without the object. */
  private lean1559(bytes: Bytes, values: Values): DecodedTx | Exit {
    const [, nonceB, prioB, maxFeeB, gasB, toB, valueB, data, accessList, vB, rB, sB] = values as [
      Bytes,
      Bytes,
      Bytes,
      Bytes,
      Bytes,
      Bytes,
      Bytes,
      Bytes,
      Values,
      Bytes,
      Bytes,
      Bytes,
    ];
    const scalars = [nonceB, prioB, maxFeeB, gasB, toB, valueB, data, vB, rB, sB];
    for (let i = 0; i < scalars.length; i++) if (!(scalars[i] instanceof Uint8Array)) return invalid('a scalar field is a list');
    // Canonical integers (no leading zero bytes), as validateNoLeadingZeroes.
    if (
      leadingZero(nonceB) ||
      leadingZero(prioB) ||
      leadingZero(maxFeeB) ||
      leadingZero(gasB) ||
      leadingZero(valueB) ||
      leadingZero(vB) ||
      leadingZero(rB) ||
      leadingZero(sB)
    )
      return invalid('integer field with leading zeros');
    if (toB.length !== 0 && toB.length !== 20) return invalid(`to address must be 20 bytes, got ${toB.length}`);
    if (valueB.length > 32 || rB.length > 32 || sB.length > 32) return invalid('value, r or s exceeds 2^256-1');
    const value = toBig(valueB);
    const gasLimit = toBig(gasB);
    if (gasLimit > MAX_UINT64) return invalid('gasLimit exceeds 2^64-1');
    const nonce = toBig(nonceB);
    if (nonce >= MAX_UINT64) return invalid('nonce must be below 2^64-1 (EIP-2681)');
    const g = this.gas;
    if (g.gasCap > 0n && gasLimit > g.gasCap) return invalid(`gasLimit exceeds the EIP-7825 cap ${g.gasCap}`);
    const isCreate = toB.length === 0;
    if (isCreate && g.eip3860 && data.length > g.maxInitCodeSize) return invalid(`initcode of ${data.length} bytes exceeds ${g.maxInitCodeSize}`);
    let slots = 0;
    for (let i = 0; i < accessList.length; i++) {
      const item = accessList[i]!;
      if (!Array.isArray(item) || item.length !== 2) return invalid('access list item must have 2 elements');
      const [addr, keys] = item as [Bytes | Values, Bytes | Values];
      if (!(addr instanceof Uint8Array) || addr.length !== 20) return invalid('access list address must be 20 bytes');
      if (!Array.isArray(keys)) return invalid('access list storage keys must be a list');
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k]!;
        if (!(key instanceof Uint8Array) || key.length !== 32) return invalid('access list storage key must be 32 bytes');
      }
      slots += keys.length;
    }
    if (maxFeeB.length > 32 || prioB.length > 32) return invalid('maxFeePerGas or maxPriorityFeePerGas exceeds 2^256-1');
    const maxFee = toBig(maxFeeB);
    const prio = toBig(prioB);
    // The product can only overflow 256 bits when the operands together exceed 32 bytes.
    if (gasB.length + maxFeeB.length > 32 && gasLimit * maxFee > MAX_UINT256) return invalid('gasLimit * maxFeePerGas exceeds 2^256-1');
    if (maxFee < prio) return invalid('maxPriorityFeePerGas exceeds maxFeePerGas');
    const v = toBig(vB);
    if (v !== 0n && v !== 1n) return reject('invalid_signature', 'Invalid signature: y-parity must be 0 or 1');
    if (rB.length === 0 || sB.length === 0) return reject('invalid_signature', 'Invalid signature: r and s must be non-zero');
    if (sB.length === 32 && compareBytes(sB, N_DIV_2_BYTES) > 0) return reject('invalid_signature', 'Invalid signature: high s (EIP-2)');

    // Intrinsic gas and, from Prague, the EIP-7623 calldata floor. Exact in doubles: the body cap
    // bounds calldata to 64 KiB, so every term stays far below 2^53.
    let zeros = 0;
    for (let i = 0; i < data.length; i++) if (data[i] === 0) zeros++;
    const nonZeros = data.length - zeros;
    let intrinsic = g.txGasN + zeros * g.zeroN + nonZeros * g.nonZeroN + accessList.length * g.alAddressN + slots * g.alSlotN;
    if (isCreate) {
      intrinsic += g.creationN;
      if (g.eip3860) intrinsic += g.initCodeWordN * Math.ceil(data.length / 32);
    }
    let minGas = intrinsic;
    if (g.floor) {
      const floor = g.txGasN + g.floorPerTokenN * (zeros + 4 * nonZeros);
      if (floor > minGas) minGas = floor;
    }
    if ((gasB.length <= 6 ? Number(gasLimit) : Infinity) < minGas) return invalid(`gasLimit ${gasLimit} is below the intrinsic gas ${minGas}`);

    // Signing hash: keccak(0x02 || rlp(first 9 fields)), taken from the raw bytes as they are.
    const { start, end } = unsignedSpan(bytes, 1, 9);
    const msgHash = keccak256Parts(TYPE_2, listHeader(end - start), bytes.subarray(start, end));
    const recid = Number(v);
    if (this.signature === 'curve') {
      // Every check recovery makes but the last: r and s in range (s low, above), and r the
      // x-coordinate of a curve point (the point R = (r, y of parity v) recovery starts from).
      // Only the final point Q = r⁻¹(sR − eG) is not computed: it is at infinity only for a
      // signature built on purpose (R = (e/s)·G), which no signer produces and the sequencer
      // refuses like any signature that does not recover.
      if (rB.length === 32 && compareBytes(rB, N_BYTES) >= 0) return REJECT.invalid_signature;
      const x = this.point;
      x.fill(0);
      x[0] = 2;
      x.set(rB, 33 - rB.length);
      if (!isCurvePoint(x)) return REJECT.invalid_signature;
      return new LeanTx(
        '0x' + hex(keccak256(bytes)),
        null,
        { r: rB, s: sB, recid, msgHash },
        this.chainId,
        nonce,
        isCreate ? null : '0x' + hex(toB),
        value,
        data,
        gasLimit,
      );
    }
    const pub = this.pub;
    if (!recover(pub, this.sig, rB, sB, recid, msgHash)) return REJECT.invalid_signature;
    return new LeanTx('0x' + hex(keccak256(bytes)), pub.slice(1), null, this.chainId, nonce, isCreate ? null : '0x' + hex(toB), value, data, gasLimit);
  }
}

/** A signature as recovery takes it: r and s (big-endian, up to 32 bytes each), y-parity, signing hash. */
interface Signed {
  readonly r: Bytes;
  readonly s: Bytes;
  readonly recid: number;
  readonly msgHash: Uint8Array;
}

/** Recovers the public key into `pub` (65 bytes), with `sig` (64 bytes) as scratch; false if it does not recover. */
function recover(pub: Uint8Array, sig: Uint8Array, r: Bytes, s: Bytes, recid: number, msgHash: Uint8Array): boolean {
  sig.fill(0);
  sig.set(r, 32 - r.length);
  sig.set(s, 64 - s.length);
  return secp256k1Addon().ecdsaRecover(pub, sig, recid, msgHash) === 0;
}

/**
 * A transaction from the lean path, its signature checked. The sender address, which no stage
 * needs on the way to the sequencer, is derived only when asked for: from the recovered key
 * (one keccak-256 less per submission), or with the `curve` check by recovering it then.
 */
class LeanTx implements DecodedTx {
  readonly type = 2;
  private from: string | null = null;

  constructor(
    readonly hash: string,
    /** The recovered public key (64 bytes, no prefix), or null when not recovered yet. */
    private publicKey: Uint8Array | null,
    /** For a later recovery (the curve check): r and s (views of the raw bytes), y-parity, signing hash. */
    private readonly signed: Signed | null,
    readonly chainId: bigint,
    readonly nonce: bigint,
    readonly to: string | null,
    readonly value: bigint,
    readonly data: Uint8Array,
    readonly gasLimit: bigint,
  ) {}

  /** The sender, recovered once; the refusal for a signature that does not recover (see DecodedTx). */
  sender(): string | Exit {
    if (this.from !== null) return this.from;
    if (this.publicKey === null) {
      const { r, s, recid, msgHash } = this.signed!;
      const pub = new Uint8Array(65);
      if (!recover(pub, new Uint8Array(64), r, s, recid, msgHash)) return REJECT.invalid_signature;
      this.publicKey = pub.subarray(1);
    }
    return (this.from = '0x' + hex(keccak256(this.publicKey).subarray(12)));
  }
}

const leadingZero = (b: Bytes): boolean => b.length > 0 && b[0] === 0;

/** Big-endian length of `n` bytes at `o`, or -1 with a leading zero byte (non-canonical). */
function lengthAt(p: Bytes, o: number, n: number): number {
  return p[o] === 0 ? -1 : readLen(p, o, n);
}

/**
 * The items of the RLP list that is exactly `p`, as subarrays (nested lists decoded by
 * RLP.decode), or null for anything RLP.decode would refuse: non-canonical prefixes and
 * lengths, lengths past the end, bytes after the list. Same rules as @ethereumjs/rlp.
 */
export function splitList(p: Bytes): Values | null {
  const b = p[0];
  if (b === undefined || b < 0xc0) return null;
  let start: number;
  let end: number;
  if (b <= 0xf7) {
    start = 1;
    end = 1 + (b - 0xc0);
  } else {
    const ll = b - 0xf7;
    if (1 + ll > p.length) return null;
    const len = lengthAt(p, 1, ll);
    if (len < 56) return null;
    start = 1 + ll;
    end = start + len;
  }
  if (end !== p.length) return null;
  const out: Values = [];
  let o = start;
  while (o < end) {
    const c = p[o]!;
    if (c < 0x80) {
      out.push(p.subarray(o, o + 1));
      o += 1;
    } else if (c <= 0xb7) {
      const len = c - 0x80;
      if (o + 1 + len > end || (len === 1 && p[o + 1]! < 0x80)) return null;
      out.push(p.subarray(o + 1, o + 1 + len));
      o += 1 + len;
    } else if (c <= 0xbf) {
      const ll = c - 0xb7;
      if (o + 1 + ll > end) return null;
      const len = lengthAt(p, o + 1, ll);
      if (len <= 55 || o + 1 + ll + len > end) return null;
      out.push(p.subarray(o + 1 + ll, o + 1 + ll + len));
      o += 1 + ll + len;
    } else {
      let hdr = 1;
      let len = c - 0xc0;
      if (c > 0xf7) {
        const ll = c - 0xf7;
        if (o + 1 + ll > end) return null;
        len = lengthAt(p, o + 1, ll);
        if (len < 56) return null;
        hdr = 1 + ll;
      }
      if (o + hdr + len > end) return null;
      if (len === 0) out.push([]);
      else
        try {
          out.push(RLP.decode(p.subarray(o, o + hdr + len)) as Values);
        } catch {
          return null;
        }
      o += hdr + len;
    }
  }
  return out;
}

/** Length of an RLP item's header and payload at `o` (input already validated by RLP.decode). */
function itemEnd(b: Bytes, o: number): number {
  const p = b[o]!;
  if (p < 0x80) return o + 1;
  if (p <= 0xb7) return o + 1 + (p - 0x80);
  if (p <= 0xbf) {
    const ll = p - 0xb7;
    return o + 1 + ll + readLen(b, o + 1, ll);
  }
  if (p <= 0xf7) return o + 1 + (p - 0xc0);
  const ll = p - 0xf7;
  return o + 1 + ll + readLen(b, o + 1, ll);
}

function readLen(b: Bytes, o: number, n: number): number {
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + b[o + i]!;
  return len;
}

/** Byte span of the first `count` items of the list at `listAt`. */
function unsignedSpan(b: Bytes, listAt: number, count: number): { start: number; end: number } {
  const p = b[listAt]!;
  const start = p <= 0xf7 ? listAt + 1 : listAt + 1 + (p - 0xf7);
  let o = start;
  for (let i = 0; i < count; i++) o = itemEnd(b, o);
  return { start, end: o };
}

const TYPE_2 = Uint8Array.of(2);
const SHORT_HEADERS = Array.from({ length: 56 }, (_, len) => Uint8Array.of(0xc0 + len));

/** The RLP list header for a payload of `len` bytes. */
function listHeader(len: number): Uint8Array {
  if (len <= 55) return SHORT_HEADERS[len]!;
  const ll = byteLength(len);
  const out = new Uint8Array(1 + ll);
  out[0] = 0xf7 + ll;
  for (let i = 0; i < ll; i++) out[1 + i] = (len >>> (8 * (ll - 1 - i))) & 0xff;
  return out;
}

const N_BYTES = Buffer.from(SECP256K1_N.toString(16).padStart(64, '0'), 'hex');
const N_DIV_2_BYTES = Buffer.from((SECP256K1_N >> 1n).toString(16).padStart(64, '0'), 'hex');

function compareBytes(a: Bytes, b: Bytes): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

function byteLength(n: number): number {
  let l = 0;
  while (n > 0) {
    l++;
    n = Math.floor(n / 256);
  }
  return l;
}

/** Maps an @ethereumjs/tx error message to a stable reason. */
function classify(message: string): Exit {
  const m = message.replace(/ \(tx type=.*$/s, '');
  if (/signature|y-parity|v value|s-values|recovery|v: /i.test(m)) return reject('invalid_signature', `Invalid signature: ${m}`);
  return reject('invalid_transaction', `Invalid transaction: ${m}`);
}
