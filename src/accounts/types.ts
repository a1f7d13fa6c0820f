/**
 * The account model the stages see, and the seam every account store is seen through. A store
 * produces immutable accounts from its source, looked up synchronously, and says what it is: a
 * store shared by the threads of a process (SharedAccountStore: one runs, worker threads
 * mirror it) or one each thread opens; whether it hears SIGHUP itself; its state, if it syncs
 * from a remote source (StoreSync); and why it could not read its source, in words.
 */
import type { AddressList } from './address-list.js';

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
  /** May be wrapped into the chain's Timeboost express lane where it is enabled and ours (src/express-lane/). */
  readonly expressLane: boolean;
  /** May use eth_sendRawTransactionConditional where the chain enables it (else 403 conditional_not_granted; docs/conditional.md). */
  readonly conditional: boolean;
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
  /** Why the store could not read its source last time (unreachable, permission denied, an invalid file…), null once it could. */
  readonly problem?: string | null;
  /** The state of a store synced from a remote source (what the metrics read), where it is one. */
  readonly state?: StoreSync;
  /** True where the store re-reads its source on SIGHUP by itself; otherwise the service calls `reload` on the signal. */
  readonly hearsSignal?: boolean;
  /** Reads the accounts again now (SIGHUP), where the store reads them itself (not a mirror). */
  reload?(trigger: string): Promise<unknown>;
  /** Resolves once the first snapshot is in force, where the store loads in the background (the database store). */
  whenLoaded?(): Promise<void>;
  /** Loads the first snapshot (resolves even if invalid: `ready` tells) and starts watching. */
  start(): Promise<void>;
  close(): void;
}

/** What a reload of a store that reads its source itself found (the accounts file): the `result` label of txgate_account_reloads_total. */
export type ReloadResult = 'loaded' | 'unchanged' | 'invalid';

/** How a store synced from a remote source is doing, shared by every thread that reads it. */
export interface StoreSync {
  /** Milliseconds since the snapshot was last synced with the source (Infinity before the first). */
  ageMs(): number;
  /** Whether the source answered the store's last call. */
  readonly up: boolean;
  /** Why the last call failed, in words (null once a call succeeds). */
  readonly problem: string | null;
  /** Change notifications received, periodic resyncs that succeeded, calls that failed. */
  readonly notifications: number;
  readonly resyncs: number;
  readonly failures: number;
}

/**
 * A store one thread runs for the whole process (one connection and listener per process, not
 * per thread): each worker thread holds a mirror of it (openMirror in open-store.ts), started
 * from `mirrorSeed()` and kept in step by the updates `onChange` hands on. Seed and updates are
 * structured-clone data only the store's own kind reads.
 */
export interface SharedAccountStore extends AccountStore {
  mirrorSeed(): unknown;
  onChange(cb: (update: unknown) => void): void;
  /** Every account in force, as one update (mirrors started while the first load ran catch up with it). */
  current(): unknown;
  whenLoaded(): Promise<void>;
  reload(trigger: string): Promise<unknown>;
}

/** A worker thread's copy of a shared store, applying the updates the main thread's store hands on. */
export interface MirrorStore extends AccountStore {
  update(update: unknown): void;
}
