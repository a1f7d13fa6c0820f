/**
 * The values a JSON-RPC peer sends, read once for every reader (the chain RPC's blocks,
 * receipts and nonces, the express lane's auction reads): a quantity as a safe integer, a hash,
 * an address. Each takes anything a peer may send and answers the value or null, never throws.
 */

/** How long a call to the chain RPC may take (a watcher pass, a status, an auction read). */
export const CALL_MS = 5_000;

/** A 0x-hex quantity as a number, or null (not a string, not hex, beyond 2^53). */
export function quantity(v: unknown): number | null {
  if (typeof v !== 'string' || v.length < 3 || v.length > 16 || !/^0x[0-9a-fA-F]+$/.test(v)) return null;
  const n = Number.parseInt(v.slice(2), 16);
  return Number.isSafeInteger(n) ? n : null;
}

/** A number as a 0x-hex quantity. */
export const hexQuantity = (n: number): string => '0x' + n.toString(16);

/** A 32-byte 0x-hex hash, lower-cased, or null. */
export function hash32(v: unknown): string | null {
  return typeof v === 'string' && v.length === 66 && /^0x[0-9a-fA-F]{64}$/.test(v) ? v.toLowerCase() : null;
}

/** A 20-byte 0x-hex address, lower-cased, or null. */
export function address(v: unknown): string | null {
  return typeof v === 'string' && v.length === 42 && /^0x[0-9a-fA-F]{40}$/.test(v) ? v.toLowerCase() : null;
}

/** 0x-hex data of whole bytes, or null. */
export function hexData(v: unknown): string | null {
  return typeof v === 'string' && v.length % 2 === 0 && /^0x[0-9a-fA-F]*$/.test(v) ? v : null;
}
