/**
 * The lean 0x02 (EIP-1559) path: the checks of @ethereumjs/tx's FeeMarket1559Tx and
 * getValidationErrors over the raw bytes, without building the object: the fields read in place
 * (offsets into the raw bytes, rlp.ts's `Items`), integers compared by their bytes or as numbers
 * where they fit, a bigint made only for a field a later stage reads (nonce, value, gas limit,
 * on first read). The signature checked with libsecp256k1: recovered (`crypto.signature:
 * "recover"`: the signing payload hashed straight out of the raw bytes), or, with `curve` (the
 * default), every check recovery makes but the last, and the signing hash and the sender only
 * when the sender is asked for (a grant's sender allow-list). What it costs against libsecp256k1
 * and keccak themselves: docs/performance.md ("The hot path against its limit").
 */
import type { Common } from '@ethereumjs/common';
import type { SignatureCheck } from '../config/config-schema.js';
import { reject, REJECT, type Exit } from '../base/errors.js';
import { isCurvePoint, keccak256, keccak256Hex, keccak256Parts, secp256k1Addon } from '../base/native.js';
import { invalid } from './refuse.js';
import { type Bytes, compareAt, compareUint, type Items, listHeader, toBigAt, TYPE_2, uintAt, type Values } from './rlp.js';
import type { DecodedTx } from './types.js';

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
  /** The cap as a number: exact where it is compared (a gas limit of up to 6 bytes). */
  readonly gasCapNumber: number;
}

function gasParams(c: Common): GasParams {
  const p = (name: string): bigint => {
    try {
      return c.param(name) ?? 0n;
    } catch {
      return 0n; // not defined before the fork that introduces it
    }
  };
  const gasCap = c.isActivatedEIP(7825) ? p('maxTransactionGasLimit') : 0n;
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
    gasCap,
    gasCapNumber: Number(gasCap),
  };
}

/** The fields of a signed 0x02 list, by index (the chain id, 0, is the decoder's). */
const NONCE = 1;
const PRIO = 2;
const MAX_FEE = 3;
const GAS = 4;
const TO = 5;
const VALUE = 6;
const DATA = 7;
const ACCESS_LIST = 8;
const V = 9;
const R = 10;
const S = 11;
/** Fields that must be byte strings (the chain id and the access list are checked before). */
const SCALARS = [NONCE, PRIO, MAX_FEE, GAS, TO, VALUE, DATA, V, R, S];
/** Integer fields: canonical, no leading zero bytes (validateNoLeadingZeroes). */
const INTEGERS = [NONCE, PRIO, MAX_FEE, GAS, VALUE, V, R, S];

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

  /**
   * The lean 0x02 path: the checks of FeeMarket1559Tx + getValidationErrors, without the object,
   * over `it`, the signed list's 12 items read in place from `b` (the decoder checked the count,
   * the chain id and that the access list is a list).
   */
  validate(b: Bytes, it: Items): DecodedTx | Exit {
    const st = it.start;
    const en = it.end;
    for (let k = 0; k < SCALARS.length; k++) if (it.lists[SCALARS[k]!] !== null) return invalid('a scalar field is a list');
    for (let k = 0; k < INTEGERS.length; k++) {
      const i = INTEGERS[k]!;
      if (en[i]! > st[i]! && b[st[i]!] === 0) return invalid('integer field with leading zeros');
    }
    const len = (i: number) => en[i]! - st[i]!;
    const toLen = len(TO);
    if (toLen !== 0 && toLen !== 20) return invalid(`to address must be 20 bytes, got ${toLen}`);
    if (len(VALUE) > 32 || len(R) > 32 || len(S) > 32) return invalid('value, r or s exceeds 2^256-1');
    // Canonical integers: their size in bytes bounds them.
    const gasLen = len(GAS);
    if (gasLen > 8) return invalid('gasLimit exceeds 2^64-1');
    if (len(NONCE) > 8 || (len(NONCE) === 8 && allOnes(b, st[NONCE]!, en[NONCE]!))) return invalid('nonce must be below 2^64-1 (EIP-2681)');
    const g = this.gas;
    if (g.gasCap > 0n && (gasLen <= 6 ? uintAt(b, st[GAS]!, en[GAS]!) > g.gasCapNumber : toBigAt(b, st[GAS]!, en[GAS]!) > g.gasCap))
      return invalid(`gasLimit exceeds the EIP-7825 cap ${g.gasCap}`);
    const isCreate = toLen === 0;
    const dataLen = len(DATA);
    if (isCreate && g.eip3860 && dataLen > g.maxInitCodeSize) return invalid(`initcode of ${dataLen} bytes exceeds ${g.maxInitCodeSize}`);
    const accessList = it.lists[ACCESS_LIST]!;
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
    if (len(MAX_FEE) > 32 || len(PRIO) > 32) return invalid('maxFeePerGas or maxPriorityFeePerGas exceeds 2^256-1');
    // The product can only overflow 256 bits when the operands together exceed 32 bytes.
    if (gasLen + len(MAX_FEE) > 32 && toBigAt(b, st[GAS]!, en[GAS]!) * toBigAt(b, st[MAX_FEE]!, en[MAX_FEE]!) > MAX_UINT256)
      return invalid('gasLimit * maxFeePerGas exceeds 2^256-1');
    if (compareUint(b, st[MAX_FEE]!, en[MAX_FEE]!, st[PRIO]!, en[PRIO]!) < 0) return invalid('maxPriorityFeePerGas exceeds maxFeePerGas');
    // y-parity 0 (the empty string) or 1 (0x01; 0x00 is a leading zero, refused above).
    const vLen = len(V);
    if (vLen > 1 || (vLen === 1 && b[st[V]!] !== 1)) return reject('invalid_signature', 'Invalid signature: y-parity must be 0 or 1');
    const recid = vLen;
    const rLen = len(R);
    const sLen = len(S);
    if (rLen === 0 || sLen === 0) return reject('invalid_signature', 'Invalid signature: r and s must be non-zero');
    if (sLen === 32 && compareAt(b, st[S]!, N_DIV_2_BYTES) > 0) return reject('invalid_signature', 'Invalid signature: high s (EIP-2)');

    // Intrinsic gas and, from Prague, the EIP-7623 calldata floor. Exact in doubles: the body cap
    // bounds calldata to 64 KiB, so every term stays far below 2^53.
    let zeros = 0;
    for (let i = st[DATA]!; i < en[DATA]!; i++) if (b[i] === 0) zeros++;
    const nonZeros = dataLen - zeros;
    let intrinsic = g.txGas + zeros * g.zero + nonZeros * g.nonZero + accessList.length * g.alAddress + slots * g.alSlot;
    if (isCreate) {
      intrinsic += g.creation;
      if (g.eip3860) intrinsic += g.initCodeWord * Math.ceil(dataLen / 32);
    }
    let minGas = intrinsic;
    if (g.floor) {
      const floor = g.txGas + g.floorPerToken * (zeros + 4 * nonZeros);
      if (floor > minGas) minGas = floor;
    }
    // A gas limit of up to 6 bytes is exact as a number (and prints as its bigint does); a longer one is above any intrinsic gas.
    if (gasLen <= 6 && uintAt(b, st[GAS]!, en[GAS]!) < minGas) return invalid(`gasLimit ${uintAt(b, st[GAS]!, en[GAS]!)} is below the intrinsic gas ${minGas}`);

    if (this.signature === 'curve') {
      // Every check recovery makes but the last: r and s in range (s low, above), and r the
      // x-coordinate of a curve point (the point R = (r, y of parity v) recovery starts from).
      // Only the final point Q = r⁻¹(sR − eG) is not computed: it is at infinity only for a
      // signature built on purpose (R = (e/s)·G), which no signer produces and the sequencer
      // refuses like any signature that does not recover. So the signing hash e is not needed
      // either until the sender is asked for.
      if (rLen === 32 && compareAt(b, st[R]!, N_BYTES) >= 0) return REJECT.invalid_signature;
      const x = this.point;
      x[0] = 2;
      const pad = 33 - rLen;
      for (let i = 1; i < pad; i++) x[i] = 0;
      for (let i = 0; i < rLen; i++) x[pad + i] = b[st[R]! + i]!;
      if (!isCurvePoint(x)) return REJECT.invalid_signature;
      return new LeanTx(b, it, recid, this.chainId, null);
    }
    const pub = this.pub;
    if (!recover(pub, this.sig, b, st[R]!, en[R]!, st[S]!, en[S]!, recid, signingHash(b, it.payload, en[ACCESS_LIST]!))) return REJECT.invalid_signature;
    return new LeanTx(b, it, recid, this.chainId, pub.slice(1));
  }
}

/** Whether `b[s..e)` is all 0xff. */
function allOnes(b: Bytes, s: number, e: number): boolean {
  for (let i = s; i < e; i++) if (b[i] !== 0xff) return false;
  return true;
}

/** The signing hash: keccak(0x02 ‖ rlp(the first 9 fields)), the list's items taken from the raw bytes as they are (`b[start..end)`). */
function signingHash(b: Bytes, start: number, end: number): Uint8Array {
  return keccak256Parts(TYPE_2, listHeader(end - start), b.subarray(start, end));
}

/** Recovers the public key into `pub` (65 bytes), with `sig` (64 bytes) as scratch, r = b[rs..re) and s = b[ss..se); false if it does not recover. */
function recover(pub: Uint8Array, sig: Uint8Array, b: Bytes, rs: number, re: number, ss: number, se: number, recid: number, msgHash: Uint8Array): boolean {
  sig.fill(0);
  for (let i = rs; i < re; i++) sig[32 - (re - i)] = b[i]!;
  for (let i = ss; i < se; i++) sig[64 - (se - i)] = b[i]!;
  return secp256k1Addon().ecdsaRecover(pub, sig, recid, msgHash) === 0;
}

/** Lower-case hex of `b[s..e)`. */
function hexAt(b: Bytes, s: number, e: number): string {
  return b instanceof Buffer ? b.toString('hex', s, e) : Buffer.from(b.buffer, b.byteOffset + s, e - s).toString('hex');
}

/**
 * A transaction from the lean path, its signature checked: its fields read in place from the raw
 * bytes (kept; a fresh copy per request), each integer made a bigint on first read. The sender
 * address, which no stage needs on the way to the sequencer, is derived only when asked for: from
 * the recovered key (one keccak-256 less per submission), or with the `curve` check by hashing
 * the signing payload and recovering it then.
 */
class LeanTx implements DecodedTx {
  readonly type = 2;
  readonly hash: string;
  readonly to: string | null;
  private from: string | null = null;
  private dataView: Uint8Array | null = null;
  private readonly nonceAt: number;
  private readonly nonceEnd: number;
  private readonly gasAt: number;
  private readonly gasEnd: number;
  private readonly valueAt: number;
  private readonly valueEnd: number;
  private readonly dataAt: number;
  private readonly dataEnd: number;
  private readonly rAt: number;
  private readonly rEnd: number;
  private readonly sAt: number;
  private readonly sEnd: number;
  /** The signing payload's span (the first 9 items), for a later recovery. */
  private readonly payloadAt: number;
  private readonly payloadEnd: number;

  constructor(
    private readonly raw: Bytes,
    it: Items,
    private readonly recid: number,
    readonly chainId: bigint,
    /** The recovered public key (64 bytes, no prefix), or null when not recovered yet. */
    private publicKey: Uint8Array | null,
  ) {
    const st = it.start;
    const en = it.end;
    this.hash = keccak256Hex(raw);
    this.to = en[TO]! === st[TO]! ? null : '0x' + hexAt(raw, st[TO]!, en[TO]!);
    this.nonceAt = st[NONCE]!;
    this.nonceEnd = en[NONCE]!;
    this.gasAt = st[GAS]!;
    this.gasEnd = en[GAS]!;
    this.valueAt = st[VALUE]!;
    this.valueEnd = en[VALUE]!;
    this.dataAt = st[DATA]!;
    this.dataEnd = en[DATA]!;
    this.rAt = st[R]!;
    this.rEnd = en[R]!;
    this.sAt = st[S]!;
    this.sEnd = en[S]!;
    this.payloadAt = it.payload;
    this.payloadEnd = en[ACCESS_LIST]!;
  }

  get nonce(): bigint {
    return toBigAt(this.raw, this.nonceAt, this.nonceEnd);
  }

  get value(): bigint {
    return toBigAt(this.raw, this.valueAt, this.valueEnd);
  }

  get gasLimit(): bigint {
    return toBigAt(this.raw, this.gasAt, this.gasEnd);
  }

  get data(): Uint8Array {
    return (this.dataView ??= this.raw.subarray(this.dataAt, this.dataEnd));
  }

  /** The sender, recovered once; the refusal for a signature that does not recover (see DecodedTx). */
  sender(): string | Exit {
    if (this.from !== null) return this.from;
    if (this.publicKey === null) {
      const pub = new Uint8Array(65);
      const msgHash = signingHash(this.raw, this.payloadAt, this.payloadEnd);
      if (!recover(pub, new Uint8Array(64), this.raw, this.rAt, this.rEnd, this.sAt, this.sEnd, this.recid, msgHash)) return REJECT.invalid_signature;
      this.publicKey = pub.subarray(1);
    }
    return (this.from = '0x' + hexAt(keccak256(this.publicKey), 12, 32));
  }
}
