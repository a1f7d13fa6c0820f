/**
 * The RLP the lean 0x02 path reads straight out of the raw bytes: the list's items as offsets
 * (`splitItems`: no view made until a field is needed) or as views (`splitList`), both with the
 * same strictness as @ethereumjs/rlp (fuzzed against it), the byte span of the unsigned fields
 * (the signing payload, hashed without re-encoding) and the list header that precedes them.
 */
import { RLP } from '@ethereumjs/rlp';

export type Bytes = Uint8Array;
export type Values = (Bytes | Values)[];

export const hex = (b: Bytes): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** A canonical big-endian integer. */
export function toBig(b: Bytes): bigint {
  return toBigAt(b, 0, b.length);
}

/**
 * The canonical big-endian integer in `b[s..e)`: exact in a double up to 6 bytes, then six bytes
 * at a time up to 32 (no hex string); longer (a hostile chain id), through hex, linear in its size.
 */
export function toBigAt(b: Bytes, s: number, e: number): bigint {
  if (e - s <= 6) return BigInt(uintAt(b, s, e));
  if (e - s > 32) return BigInt('0x' + Buffer.from(b.buffer, b.byteOffset + s, e - s).toString('hex'));
  let n = 0n;
  let i = s;
  const head = (e - s) % 6;
  if (head > 0) {
    n = BigInt(uintAt(b, s, s + head));
    i += head;
  }
  for (; i < e; i += 6) n = (n << 48n) | BigInt(uintAt(b, i, i + 6));
  return n;
}

/** `b[s..e)` as a big-endian number: exact for up to 6 bytes. */
export function uintAt(b: Bytes, s: number, e: number): number {
  let n = 0;
  for (let i = s; i < e; i++) n = n * 256 + b[i]!;
  return n;
}

/** Big-endian length of `n` bytes at `o`, or -1 with a leading zero byte (non-canonical). */
function lengthAt(p: Bytes, o: number, n: number): number {
  return p[o] === 0 ? -1 : readLen(p, o, n);
}

/**
 * The items of an RLP list read in place (`splitItems`): item i's payload is
 * `bytes[start[i]..end[i])`, and `lists[i]` is its decoded value when it is a list (nested lists
 * decoded by RLP.decode; `EMPTY_LIST` for 0xc0), null when it is a byte string. The first
 * `capacity` items are recorded; `count` counts them all. One per decoder, reused: decoding is
 * synchronous, one transaction at a time per thread.
 */
export class Items {
  count = 0;
  /** Where the list's payload starts: the first item's header (the signing payload's start). */
  payload = 0;
  readonly start: Int32Array;
  readonly end: Int32Array;
  readonly lists: (Values | null)[];

  constructor(readonly capacity: number) {
    this.start = new Int32Array(capacity);
    this.end = new Int32Array(capacity);
    this.lists = new Array<Values | null>(capacity).fill(null);
  }

  /** Item i's payload as a view. */
  bytes(p: Bytes, i: number): Bytes {
    return p.subarray(this.start[i]!, this.end[i]!);
  }
}

/** The decoded value of an empty list item (never handed out: `splitList` gives each its own). */
export const EMPTY_LIST: Values = Object.freeze([]) as unknown as Values;

/**
 * Reads the RLP list that is exactly `p[at..]` into `out`, or false for anything RLP.decode would
 * refuse: non-canonical prefixes and lengths, lengths past the end, bytes after the list, a nested
 * list RLP.decode refuses. Same rules as @ethereumjs/rlp.
 */
export function splitItems(p: Bytes, at: number, out: Items): boolean {
  const b = p[at];
  if (b === undefined || b < 0xc0) return false;
  let start: number;
  let end: number;
  if (b <= 0xf7) {
    start = at + 1;
    end = at + 1 + (b - 0xc0);
  } else {
    const ll = b - 0xf7;
    if (at + 1 + ll > p.length) return false;
    const len = lengthAt(p, at + 1, ll);
    if (len < 56) return false;
    start = at + 1 + ll;
    end = start + len;
  }
  if (end !== p.length) return false;
  out.payload = start;
  let n = 0;
  let o = start;
  while (o < end) {
    const c = p[o]!;
    let s: number;
    let e: number;
    let list: Values | null = null;
    if (c < 0x80) {
      s = o;
      e = o + 1;
    } else if (c <= 0xb7) {
      const len = c - 0x80;
      if (o + 1 + len > end || (len === 1 && p[o + 1]! < 0x80)) return false;
      s = o + 1;
      e = s + len;
    } else if (c <= 0xbf) {
      const ll = c - 0xb7;
      if (o + 1 + ll > end) return false;
      const len = lengthAt(p, o + 1, ll);
      if (len <= 55 || o + 1 + ll + len > end) return false;
      s = o + 1 + ll;
      e = s + len;
    } else {
      let hdr = 1;
      let len = c - 0xc0;
      if (c > 0xf7) {
        const ll = c - 0xf7;
        if (o + 1 + ll > end) return false;
        len = lengthAt(p, o + 1, ll);
        if (len < 56) return false;
        hdr = 1 + ll;
      }
      if (o + hdr + len > end) return false;
      s = o + hdr;
      e = s + len;
      if (len === 0) list = EMPTY_LIST;
      else
        try {
          list = RLP.decode(p.subarray(o, e)) as Values;
        } catch {
          return false;
        }
    }
    if (n < out.capacity) {
      out.start[n] = s;
      out.end[n] = e;
      out.lists[n] = list;
    }
    n++;
    o = e;
  }
  out.count = n;
  return true;
}

/**
 * The items of the RLP list that is exactly `p`, as subarrays (nested lists decoded by
 * RLP.decode), or null for anything RLP.decode would refuse (`splitItems`' rules).
 */
export function splitList(p: Bytes): Values | null {
  const items = new Items(p.length);
  if (!splitItems(p, 0, items)) return null;
  const out: Values = [];
  for (let i = 0; i < items.count; i++) {
    const l = items.lists[i] ?? null;
    out.push(l === null ? items.bytes(p, i) : l === EMPTY_LIST ? [] : l);
  }
  return out;
}

function readLen(b: Bytes, o: number, n: number): number {
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + b[o + i]!;
  return len;
}

export const TYPE_2 = Uint8Array.of(2);
const SHORT_HEADERS = Array.from({ length: 56 }, (_, len) => Uint8Array.of(0xc0 + len));

/** The RLP list header for a payload of `len` bytes. */
export function listHeader(len: number): Uint8Array {
  if (len <= 55) return SHORT_HEADERS[len]!;
  const ll = byteLength(len);
  const out = new Uint8Array(1 + ll);
  out[0] = 0xf7 + ll;
  for (let i = 0; i < ll; i++) out[1 + i] = (len >>> (8 * (ll - 1 - i))) & 0xff;
  return out;
}

/** Compares the canonical big-endian integers `p[as..ae)` and `p[bs..be)` (no leading zero bytes): by length, then bytes. */
export function compareUint(p: Bytes, as: number, ae: number, bs: number, be: number): number {
  if (ae - as !== be - bs) return ae - as - (be - bs);
  for (let i = 0; i < ae - as; i++) if (p[as + i] !== p[bs + i]) return p[as + i]! - p[bs + i]!;
  return 0;
}

/** Compares `p[at..at + b.length)` with `b`, byte by byte. */
export function compareAt(p: Bytes, at: number, b: Bytes): number {
  for (let i = 0; i < b.length; i++) if (p[at + i] !== b[i]) return p[at + i]! - b[i]!;
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
