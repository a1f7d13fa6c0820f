import type { Exit } from '../base/errors.js';

/** A decoded transaction, its signature checked (config `crypto.signature`), as the later stages see it. */
export interface DecodedTx {
  /** 0 = legacy, 1 = EIP-2930, 2 = EIP-1559, 4 = EIP-7702. */
  readonly type: number;
  /** 0x-prefixed lower-case keccak-256 of the raw bytes: the transaction hash. */
  readonly hash: string;
  /**
   * The 0x-prefixed lower-case sender address, recovered on the first call on the lean path (only
   * a policy that needs it calls: a grant's sender allow-list), or the refusal when the signature
   * does not recover: with the `curve` check, the one signature that check lets through and
   * recovery refuses (one built so the recovered point is at infinity).
   */
  sender(): string | Exit;
  readonly chainId: bigint;
  readonly nonce: bigint;
  /** Lower-case 0x address, or null for contract creation. */
  readonly to: string | null;
  readonly value: bigint;
  readonly data: Uint8Array;
  readonly gasLimit: bigint;
}
