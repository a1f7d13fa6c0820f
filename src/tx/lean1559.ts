/**
 * The lean 0x02 (EIP-1559) path: the checks of @ethereumjs/tx's FeeMarket1559Tx and
 * getValidationErrors over the raw bytes, without building the object; the signing payload is
 * hashed straight out of the raw bytes, and the signature checked with libsecp256k1: recovered
 * (`crypto.signature: "recover"`), or, with `curve` (the default), every check recovery makes
 * but the last, the sender recovered only when asked for (a grant's sender allow-list).
 */
import type { Common } from '@ethereumjs/common';
import type { SignatureCheck } from '../config/config-schema.js';
import { reject, REJECT, type Exit } from '../base/errors.js';
import { isCurvePoint, keccak256, keccak256Parts, secp256k1Addon } from '../base/native.js';
import { invalid } from './refuse.js';
import { type Bytes, compareBytes, hex, leadingZero, listHeader, toBig, TYPE_2, unsignedSpan, type Values } from './rlp.js';
import type { DecodedTx } from './types.js';

const MAX_UINT64 = (1n << 64n) - 1n;
const MAX_UINT256 = (1n << 256n) - 1n;
/** The order of the secp256k1 group, and half of it (EIP-2's low-s bound), as 32 bytes. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const N_BYTES = Buffer.from(SECP256K1_N.toString(16).padStart(64, '0'), 'hex');
const N_DIV_2_BYTES = Buffer.from((SECP256K1_N >> 1n).toString(16).padStart(64, '0'), 'hex');

/**
 * Gas parameters, read once from the chain's Common. Numbers: the body cap bounds calldata to
 * 64 KiB, so every intrinsic-gas term is exact in a double; the cap is compared with the
 * transaction's 64-bit gas limit, so it stays a bigint.
 */
interface GasParams {
  readonly txGas: number;
  readonly zero: number;
  readonly nonZero: number;
  readonly creation: number;
  readonly initCodeWord: number;
  readonly alAddress: number;
  readonly alSlot: number;
  readonly floorPerToken: number;
  readonly floor: boolean;
  readonly eip3860: boolean;
  readonly maxInitCodeSize: number;
  readonly gasCap: bigint;
}

function gasParams(c: Common): GasParams {
  const p = (name: string): bigint => {
    try {
      return c.param(name) ?? 0n;
    } catch {
      return 0n; // not defined before the fork that introduces it
    }
  };
  return {
    txGas: Number(p('txGas')),
    zero: Number(p('txDataZeroGas')),
    nonZero: Number(p('txDataNonZeroGas')),
    creation: c.gteHardfork('homestead') ? Number(p('txCreationGas')) : 0,
    initCodeWord: Number(p('initCodeWordGas')),
    alAddress: Number(p('accessListAddressGas')),
    alSlot: Number(p('accessListStorageKeyGas')),
    floorPerToken: Number(p('totalCostFloorPerToken')),
    floor: c.isActivatedEIP(7623),
    eip3860: c.isActivatedEIP(3860),
    maxInitCodeSize: Number(p('maxInitCodeSize')),
    gasCap: c.isActivatedEIP(7825) ? p('maxTransactionGasLimit') : 0n,
  };
}

export class Lean1559 {
  private readonly gas: GasParams;
  /** Scratch buffers for recovery (decoding is synchronous: one request at a time per thread). */
  private readonly sig = new Uint8Array(64);
  private readonly pub = new Uint8Array(65);
  /** 0x02 ‖ r: the compressed point the curve check parses. */
  private readonly point = new Uint8Array(33);

  constructor(
    common: Common,
    private readonly chainId: bigint,
    private readonly signature: SignatureCheck,
  ) {
    this.gas = gasParams(common);
  }

  /** The lean 0x02 path: the checks of FeeMarket1559Tx + getValidationErrors, without the object. */
  validate(bytes: Bytes, values: Values): DecodedTx | Exit {
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
    let intrinsic = g.txGas + zeros * g.zero + nonZeros * g.nonZero + accessList.length * g.alAddress + slots * g.alSlot;
    if (isCreate) {
      intrinsic += g.creation;
      if (g.eip3860) intrinsic += g.initCodeWord * Math.ceil(data.length / 32);
    }
    let minGas = intrinsic;
    if (g.floor) {
      const floor = g.txGas + g.floorPerToken * (zeros + 4 * nonZeros);
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
