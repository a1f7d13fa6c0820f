/**
 * The account model the stages see. It is what an account store produces from its source
 * (the accounts file, or later a database): immutable snapshots, looked up synchronously.
 */
import type { AddressList } from './address-list.js';
import type { StoreState } from './postgres/state.js';

export type FeePattern =
  | { readonly kind: 'transfer' }
  | {
      readonly kind: 'call';
      /** Lower-case 0x address of the approved contract. */
      readonly to: string;
      /** Lower-case 0x + 8 hex digits. */
      readonly selector: string;
      /** Index of the 32-byte ABI word (after the selector) holding the receiver. */
      readonly receiverArg: number;
      /** Index of the 32-byte ABI word holding the amount. */
      readonly amountArg: number;
    };

export interface Grant {
  readonly chainId: number;
  /** `<account id>/<chain id>`: names this grant's rate-limit bucket, stable across reloads. */
  readonly bucketKey: string;
  readonly rateLimit: { readonly perSecond: number; readonly burst: number };
  /** Accepted envelope types (0 = legacy EIP-155). Blob (3) is never accepted. */
  readonly txTypes: ReadonlySet<number>;
  /** The tip addresses: `has` matches lower-case 0x addresses; listed to the client checksummed (address-list.ts). */
  readonly tipAddresses: AddressList;
  readonly minTipWei: bigint;
  readonly feePatterns: readonly FeePattern[];
  /**
   * The sender allow-list: lower-case 0x addresses a transaction must be signed by (the sender is
   * then recovered), or null when the grant has none (nothing recovered, nothing paid).
   */
  readonly senders: AddressList | null;
  /** May use eth_sendRawTransactionSync where the chain enables it (else 403 sync_not_granted). */
  readonly sync: boolean;
}

export interface Account {
  readonly id: string;
  readonly submissionEnabled: boolean;
  readonly allowUntipped: boolean;
  readonly grants: ReadonlyMap<number, Grant>;
}

/**
 * Where accounts come from. The hot path only calls `byKeyHash`, synchronously, against an
 * in-memory snapshot; a store backed by a database keeps that snapshot fresh in the
 * background (poll or notify) and the stages never change.
 */
export interface AccountStore {
  /** Lower-case hex SHA-256 of the presented key → the account, or undefined (unknown or revoked). */
  byKeyHash(keySha256Hex: string): Account | undefined;
  /** True once a first valid snapshot is loaded. */
  readonly ready: boolean;
  /** True while the snapshot is older than the store's bound (a database store cut off): 503 credentials_stale. */
  readonly stale: boolean;
  /** Accounts in the current snapshot. */
  readonly size: number;
  /** Why the store could not be read last time (a database store: unreachable, permission denied…), null once it could. */
  readonly problem?: string | null;
  /** A database store's state shared across threads (what the metrics read), where there is one. */
  readonly state?: StoreState;
  /** Reads the accounts again now (SIGHUP), where the store reads them itself (not a mirror). */
  reload?(trigger: string): Promise<unknown>;
  /** Resolves once the first snapshot is in force, where the store loads in the background (the database store). */
  whenLoaded?(): Promise<void>;
  /** Loads the first snapshot (resolves even if invalid: `ready` tells) and starts watching. */
  start(): Promise<void>;
  close(): void;
}
