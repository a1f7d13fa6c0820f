/**
 * Recognises a Solana wire transaction so it can be refused with its own reason. The shape is
 * walked completely and must consume every byte: compact-u16 signature count, 64-byte
 * signatures, the message (legacy, or versioned with a 0x80|version prefix): header
 * (required signatures = signature count, read-only counts within bounds), account keys,
 * recent blockhash, instructions, and for v0 the address-table lookups.
 */

/** Solana's packet limit for a serialized transaction. */
const MAX_SOLANA_TX = 1232;

/** Reads a compact-u16 at `o`; returns [value, next offset] or null. */
function compactU16(b: Uint8Array, o: number): [number, number] | null {
  let value = 0;
  for (let i = 0; i < 3; i++) {
    if (o >= b.length) return null;
    const byte = b[o++]!;
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) return i > 0 && byte === 0 ? null : [value, o];
  }
  return null;
}

export function isSolanaWireTransaction(b: Uint8Array): boolean {
  if (b.length < 1 + 64 + 3 + 1 + 32 + 32 + 1 || b.length > MAX_SOLANA_TX) return false;
  let r = compactU16(b, 0);
  if (r === null) return false;
  const nSig = r[0];
  let o = r[1] + 64 * nSig;
  if (nSig < 1 || o + 3 > b.length) return false;
  let versioned = false;
  if ((b[o]! & 0x80) !== 0) {
    if ((b[o]! & 0x7f) !== 0) return false; // only v0 exists
    versioned = true;
    o++;
  }
  const required = b[o]!;
  const roSigned = b[o + 1]!;
  const roUnsigned = b[o + 2]!;
  o += 3;
  if (required !== nSig || roSigned >= required) return false;
  r = compactU16(b, o);
  if (r === null) return false;
  const nKeys = r[0];
  o = r[1];
  if (nKeys < required || roUnsigned > nKeys - required) return false;
  o += 32 * nKeys + 32; // account keys, recent blockhash
  r = compactU16(b, o);
  if (r === null) return false;
  const nIx = r[0];
  o = r[1];
  for (let i = 0; i < nIx; i++) {
    if (o >= b.length) return false;
    const program = b[o++]!;
    if (!versioned && program >= nKeys) return false;
    r = compactU16(b, o);
    if (r === null) return false;
    o = r[1] + r[0]; // account indexes
    r = compactU16(b, o);
    if (r === null) return false;
    o = r[1] + r[0]; // instruction data
    if (o > b.length) return false;
  }
  if (versioned) {
    r = compactU16(b, o);
    if (r === null) return false;
    const nLookups = r[0];
    o = r[1];
    for (let i = 0; i < nLookups; i++) {
      o += 32;
      r = compactU16(b, o);
      if (r === null) return false;
      o = r[1] + r[0];
      r = compactU16(b, o);
      if (r === null) return false;
      o = r[1] + r[0];
      if (o > b.length) return false;
    }
  }
  return o === b.length;
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B58_INDEX = new Int8Array(128).fill(-1);
for (let i = 0; i < B58.length; i++) B58_INDEX[B58.charCodeAt(i)] = i;

/** Base58 (Bitcoin alphabet) → bytes, or null. Bounded by the Solana size limit. */
export function base58Decode(s: string): Uint8Array | null {
  if (s.length === 0 || s.length > 2 * MAX_SOLANA_TX) return null;
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const v = c < 128 ? B58_INDEX[c]! : -1;
    if (v < 0) return null;
    let carry = v;
    for (let j = 0; j < bytes.length; j++) {
      carry += bytes[j]! * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  for (let i = 0; i < s.length && s[i] === '1'; i++) bytes.push(0);
  return Uint8Array.from(bytes.reverse());
}

/** Strict base64 / base64url → bytes, or null. */
export function base64Decode(s: string): Uint8Array | null {
  if (!/^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/.test(s)) return null;
  const b = Buffer.from(s, s.includes('-') || s.includes('_') ? 'base64url' : 'base64');
  return b.length === 0 ? null : b;
}

/** A non-hex string param: is it a Solana transaction in base58 or base64? */
export function isSolanaText(s: string): boolean {
  const b58 = base58Decode(s);
  if (b58 !== null && isSolanaWireTransaction(b58)) return true;
  const b64 = base64Decode(s);
  return b64 !== null && isSolanaWireTransaction(b64);
}
