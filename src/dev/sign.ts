/**
 * Fast local signing of EIP-1559 transactions with libsecp256k1 (for load generation and tests
 * that need transactions no library would build). Not used by the service.
 */
import { RLP } from '@ethereumjs/rlp';
import { keccak256, secp256k1 } from '../base/native.js';

/** Minimal big-endian bytes of n (empty for 0), as RLP integers are encoded. */
export function intBytes(n: bigint | number): Uint8Array {
  const v = BigInt(n);
  if (v === 0n) return new Uint8Array();
  const h = v.toString(16);
  return Buffer.from(h.length % 2 === 0 ? h : '0' + h, 'hex');
}

export interface Raw1559 {
  chainId: number;
  nonce: number | bigint;
  maxPriorityFeePerGas: bigint;
  maxFeePerGas: bigint;
  gas: bigint;
  to: string | null;
  value: bigint;
  data?: Uint8Array;
}

/** Signs the 9 fields as given (no sanity checks: a client could send anything). */
export function signFields1559(fields: (Uint8Array | Uint8Array[])[], privateKey: string): `0x${string}` {
  const unsigned = Buffer.concat([Buffer.from([2]), Buffer.from(RLP.encode(fields))]);
  const { signature, recid } = secp256k1().ecdsaSign(keccak256(unsigned), Buffer.from(privateKey.replace(/^0x/, ''), 'hex'));
  const strip = (b: Uint8Array) => {
    let i = 0;
    while (i < b.length && b[i] === 0) i++;
    return b.subarray(i);
  };
  const signed = [...fields, recid === 0 ? new Uint8Array() : Uint8Array.of(recid), strip(signature.subarray(0, 32)), strip(signature.subarray(32))];
  return `0x02${Buffer.from(RLP.encode(signed)).toString('hex')}`;
}

export function sign1559(t: Raw1559, privateKey: string): `0x${string}` {
  return signFields1559(
    [
      intBytes(t.chainId),
      intBytes(t.nonce),
      intBytes(t.maxPriorityFeePerGas),
      intBytes(t.maxFeePerGas),
      intBytes(t.gas),
      t.to === null ? new Uint8Array() : Buffer.from(t.to.slice(2), 'hex'),
      intBytes(t.value),
      t.data ?? new Uint8Array(),
      [],
    ],
    privateKey,
  );
}
