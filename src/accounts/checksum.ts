/**
 * EIP-55 checksums for account addresses. With `initChecksum()` awaited, the keccak is
 * hash-wasm's, much faster than @ethereumjs/util's (measured on 100,000 addresses):
 * what a large grant's check costs is mostly its checksums. Before it (the onboarding CLI, a
 * test), @ethereumjs/util's is used.
 */
import { toChecksumAddress } from '@ethereumjs/util';
import { createKeccak } from 'hash-wasm';

type Hasher = Awaited<ReturnType<typeof createKeccak>>;
let hasher: Hasher | undefined;

export async function initChecksum(): Promise<void> {
  hasher ??= await createKeccak(256);
}

/** The EIP-55 form of 40 lower-case hex digits (no 0x), without the 0x. */
export function checksumBody(lower: string): string {
  const h = hasher;
  if (h === undefined) return toChecksumAddress('0x' + lower).slice(2);
  h.init();
  h.update(lower);
  const d = h.digest('binary');
  for (let i = 0; i < 40; i++) {
    const c = lower.charCodeAt(i);
    const nibble = i % 2 === 0 ? d[i >> 1]! >> 4 : d[i >> 1]! & 15;
    // a-f (97-102) upper-cased where the hash's nibble is ≥ 8
    out[i] = c >= 97 && nibble >= 8 ? c - 32 : c;
  }
  return out.toString('latin1', 0, 40);
}

const out = Buffer.alloc(40);
