/**
 * A grant's address list (tip addresses, senders) in a form that needs no parsing, no copy and
 * no garbage to share or to install: two byte arrays over SharedArrayBuffers, built once where
 * the list is parsed (for a large fleet row, the row checker's thread) and handed to every
 * thread by reference (structured clone shares a SharedArrayBuffer):
 * - `sorted`: the 20-byte addresses, sorted (for `has`, a binary search: ≤ 17 steps for 100,000);
 * - `listed`: the JSON array text of the EIP-55 addresses in the listed order (what GET
 *   /tip-addresses shows), with `digest` (SHA-256 of that text, base64url) standing for it in
 *   the answer's ETag, so an answer is built by splicing, never by listing 100,000 strings.
 * A 100,000-address list is ~2 MB + ~4.4 MB outside the JavaScript heap: a thread that adopts it
 * copies nothing and its collector never scans or moves it. Short lists (≤ 64) also keep a Set
 * of their lower-case addresses: the hot path's lookup stays a Set.has.
 */
import { createHash } from 'node:crypto';

const BYTES = 20;
const SMALL = 64;

/** What crosses threads (structured clone keeps no class; the arrays' memory is shared). */
export interface AddressListWire {
  readonly sorted: Uint8Array;
  readonly listed: Uint8Array;
  readonly digest: string;
}

/** The 20 bytes of a lower-case hex body (40 digits) into `out`; false if it is not one. */
function hexInto(hex: string, from: number, out: Uint8Array): boolean {
  for (let i = 0; i < BYTES; i++) {
    const hi = nibble(hex.charCodeAt(from + 2 * i));
    const lo = nibble(hex.charCodeAt(from + 2 * i + 1));
    if (hi < 0 || lo < 0) return false;
    out[i] = (hi << 4) | lo;
  }
  return true;
}

function nibble(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

const probe = new Uint8Array(BYTES);

export class AddressList {
  private readonly set: ReadonlySet<string> | null;
  readonly size: number;

  constructor(
    /** The 20-byte addresses, sorted, concatenated. */
    readonly sorted: Uint8Array,
    /** The JSON array text (latin1) of the EIP-55 addresses, in the listed order. */
    readonly listed: Uint8Array,
    /** SHA-256 of `listed`, base64url. */
    readonly digest: string,
  ) {
    this.size = Math.floor(sorted.length / BYTES);
    if (this.size <= SMALL) {
      const s = new Set<string>();
      const b = Buffer.from(sorted.buffer, sorted.byteOffset, sorted.byteLength);
      for (let i = 0; i < this.size; i++) s.add('0x' + b.toString('hex', i * BYTES, i * BYTES + BYTES));
      this.set = s;
    } else this.set = null;
  }

  /** From lower-case 40-digit bodies (distinct) and their EIP-55 bodies, in the listed order. */
  static of(lower: readonly string[], checksummed: readonly string[]): AddressList {
    const sorted = new Uint8Array(new SharedArrayBuffer(lower.length * BYTES));
    const order = [...lower].sort();
    for (let i = 0; i < order.length; i++) hexInto(order[i]!, 0, sorted.subarray(i * BYTES, i * BYTES + BYTES));
    const text = checksummed.length === 0 ? '[]' : `["0x${checksummed.join('","0x')}"]`;
    const listed = new Uint8Array(new SharedArrayBuffer(text.length));
    Buffer.from(listed.buffer, 0, listed.byteLength).write(text, 'latin1');
    return new AddressList(sorted, listed, createHash('sha256').update(text, 'latin1').digest('base64url'));
  }

  static fromWire(w: AddressListWire): AddressList {
    return new AddressList(w.sorted, w.listed, w.digest);
  }

  toWire(): AddressListWire {
    return { sorted: this.sorted, listed: this.listed, digest: this.digest };
  }

  /** Whether '0x' + 40 lower-case hex digits is listed. */
  has(address: string): boolean {
    if (this.set !== null) return this.set.has(address);
    if (address.length !== 2 + 2 * BYTES || !hexInto(address, 2, probe)) return false;
    const s = this.sorted;
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = mid * BYTES;
      let c = 0;
      for (let i = 0; i < BYTES && c === 0; i++) c = s[at + i]! - probe[i]!;
      if (c === 0) return true;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /** The JSON array text of the listed EIP-55 addresses (a copy out of the shared bytes, no encoding). */
  json(): string {
    return Buffer.from(this.listed.buffer, this.listed.byteOffset, this.listed.byteLength).toString('latin1');
  }

  /** The EIP-55 addresses, as listed. */
  toArray(): string[] {
    return JSON.parse(this.json()) as string[];
  }

  /** JSON.stringify writes the listed EIP-55 addresses. */
  toJSON(): string[] {
    return this.toArray();
  }
}
