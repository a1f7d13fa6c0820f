/**
 * The RLP the lean 0x02 path reads straight out of the raw bytes: the list split into views (the
 * same strictness as @ethereumjs/rlp, fuzzed against it), the byte span of the unsigned fields
 * (the signing payload, hashed without re-encoding) and the list header that precedes them.
 */
import { RLP } from '@ethereumjs/rlp';

export type Bytes = Uint8Array;
export type Values = (Bytes | Values)[];

export const hex = (b: Bytes): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** A canonical big-endian integer. */
export function toBig(b: Bytes): bigint {
  if (b.length === 0) return 0n;
  if (b.length <= 6) {
    let n = 0;
    for (let i = 0; i < b.length; i++) n = n * 256 + b[i]!;
    return BigInt(n);
  }
  return BigInt('0x' + hex(b));
}

export const leadingZero = (b: Bytes): boolean => b.length > 0 && b[0] === 0;

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
export function unsignedSpan(b: Bytes, listAt: number, count: number): { start: number; end: number } {
  const p = b[listAt]!;
  const start = p <= 0xf7 ? listAt + 1 : listAt + 1 + (p - 0xf7);
  let o = start;
  for (let i = 0; i < count; i++) o = itemEnd(b, o);
  return { start, end: o };
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

export function compareBytes(a: Bytes, b: Bytes): number {
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
