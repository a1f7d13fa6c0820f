/**
 * Native crypto for @ethereumjs: `customCrypto.ecrecover` is what its transactions call to
 * recover the sender (wiring only `ecdsaRecover` silently leaves them on the pure-JS curve,
 * ≈1.6 ms per transaction), and `keccak256` is what they hash with.
 */
import { createCustomCommon, Mainnet, type Common, type CustomCrypto } from '@ethereumjs/common';
import { paramsTx } from '@ethereumjs/tx';
import { keccak256, secp256k1 } from '../base/native.js';

/** ecrecover over libsecp256k1: the 64-byte uncompressed public key (no 0x04 prefix). */
export function nativeEcrecover(msgHash: Uint8Array, v: bigint, r: Uint8Array, s: Uint8Array, chainId?: bigint): Uint8Array {
  const recovery = v === 0n || v === 1n ? v : chainId === undefined ? v - 27n : v - (chainId * 2n + 35n);
  if (recovery !== 0n && recovery !== 1n) throw new Error('Invalid signature v value');
  if (r.length > 32 || s.length > 32) throw new Error('Invalid signature: r or s longer than 32 bytes');
  const sig = new Uint8Array(64);
  sig.set(r, 32 - r.length);
  sig.set(s, 64 - s.length);
  return secp256k1().ecdsaRecover(sig, Number(recovery), msgHash, false).subarray(1);
}

export const NATIVE_CRYPTO: CustomCrypto = { ecrecover: nativeEcrecover, keccak256 };

/** One Common per chain, built at start-up, with the native crypto and the tx parameters. */
/** `customCrypto` null = @ethereumjs's own pure-JS crypto (only for comparison in benches). */
export function chainCommon(chainId: number, hardfork: string, customCrypto: CustomCrypto | null = NATIVE_CRYPTO): Common {
  const common = createCustomCommon({ chainId, name: `chain-${chainId}` }, Mainnet, {
    hardfork,
    ...(customCrypto !== null ? { customCrypto } : {}),
  });
  common.updateParams(paramsTx);
  return common;
}
