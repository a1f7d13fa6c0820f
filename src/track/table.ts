/**
 * The status table of one chain (one per process, on the thread that owns the tracker:
 * seam/): every transaction this edge accepted, with its
 * timeline, bounded. Final entries stay `keepMs`; when the table is full the oldest final entry
 * goes first (counted), and a table full of pending entries refuses to track a new acceptance
 * (counted): never the submission. Every move goes through `move`, which refuses a transition
 * states.ts does not list, bumps the entry's version and tells the listener once.
 */
import { HashIndex, keyOf } from './hash-index.js';
import { Interned } from './intern.js';
import { inNoBlock, isFinal, mayMove, type TrackState } from './states.js';

/**
 * Where a tracked transaction landed (`block`: included or reverted), or where the transaction
 * that replaced it did (`replacement`): set only once it did (a pending entry carries none).
 */
export type Landing =
  | {
      readonly kind: 'block';
      readonly number: number;
      readonly hash: string;
      readonly index: number;
      readonly gasUsed: number;
      /** The block's own timestamp (s). */
      readonly time: number;
      /** When this edge saw the block (epoch ms). */
      readonly seenAt: number;
    }
  | {
      /** A flashblock carried it (`preconfirmed`): the block being built, the slice's index, the slice receipt's status where it had one. */
      readonly kind: 'preconfirmed';
      readonly number: number;
      readonly index: number;
      readonly status: 0 | 1 | null;
      /** When this edge read the slice (epoch ms). */
      readonly seenAt: number;
    }
  | {
      readonly kind: 'replacement';
      readonly number: number;
      readonly hash: string;
      /** The transaction that used the nonce. */
      readonly by: string;
    };

/** What a tracked transaction is made from, named: the acceptance as the forward (or another thread) told it. */
export interface Accepted {
  readonly hash: string;
  readonly account: string;
  /** Epoch ms: the request's arrival, and the acceptance. */
  readonly receivedAt: number;
  readonly acceptedAt: number;
  /** The sequencer that accepted it, and the rule that established it (`hash`, `lookup`, `resend`). */
  readonly sequencer: string;
  readonly rule: string;
  /** The sender where a policy already told it, else null (the first lookup tells it). */
  readonly sender: string | null;
  /** The signed bytes (kept until the sender and the nonce are known). */
  readonly raw: string | null;
  /** The sender's nonce where known, else null. */
  readonly nonce?: number | null | undefined;
}

/** The states as an entry's packed field numbers them (STEPS: its reorgs and version above). */
const BY_INDEX: readonly TrackState[] = ['pending', 'included', 'reverted', 'replaced', 'dropped', 'expired', 'preconfirmed'];
const INDEX: Readonly<Record<TrackState, number>> = { pending: 0, included: 1, reverted: 2, replaced: 3, dropped: 4, expired: 5, preconfirmed: 6 };
/** The packed field: state + 8 × reorgs + 2048 × version (reorgs counted up to 255). */
const REORG = 8;
const VERSION = 2048;
const MAX_REORGS = 255;
/**
 * Epoch ms an entry's acceptance time is kept from: an offset that fits a small integer (no
 * number object of its own, 16 bytes) for 24 days of the process's life; past that the engine
 * keeps it as a number object, the same value.
 */
const EPOCH = Date.now();

/**
 * One tracked transaction. Times are epoch ms. Kept small (docs/tracking.md gives the figure):
 * where it landed is one field, null while pending; its state, reorgs and version one small
 * integer; times kept as small offsets (the acceptance from the process's start, the others from
 * the acceptance); the sequencer label, the rule and the account are shared strings.
 */
export class Entry {
  /** state + REORG × reorgs + VERSION × version (arithmetic, not bits: exact past 2^31 too). */
  private packed = VERSION;
  /** The sender, once the chain or a policy told it (the nonce check needs it). */
  sender: string | null;
  /** The signed bytes, kept only until the sender and the nonce are known (a replaced transaction is found by them). */
  raw: string | null;
  /** Where it landed (included, reverted) or its replacement did (replaced); null otherwise. */
  at: Landing | null = null;
  /** `expired` (track/expiry.ts): the bound the chain passed, and the head that passed it; else null. */
  expiredBy: { readonly bound: string; readonly head: number } | null = null;
  /** The watcher's: the head number from which the drop/replace check may run. */
  checkFrom = 0;
  /** The head when it was accepted (the search for a replacement starts there). */
  sinceBlock = 0;
  /** `updatedAt - acceptedAt`, `acceptedAt - receivedAt` and `acceptedAt - EPOCH`: offsets, small integers. */
  private updatedMs = 0;
  private readonly receivedMs: number;
  private readonly acceptedMs: number;

  /** The sender's nonce it uses, once the chain (or its bytes) told it; null until then. */
  nonce: number | null;
  readonly hash: string;
  readonly account: string;
  /** The sequencer that accepted it, and the rule that established it (`hash`, `lookup`, `resend`). */
  readonly sequencer: string;
  readonly rule: string;

  constructor(a: Accepted) {
    this.hash = a.hash;
    this.account = a.account;
    this.acceptedMs = a.acceptedAt - EPOCH;
    this.sequencer = a.sequencer;
    this.rule = a.rule;
    this.sender = a.sender;
    this.nonce = a.nonce ?? null;
    this.raw = a.sender === null || this.nonce === null ? a.raw : null;
    this.receivedMs = a.acceptedAt - a.receivedAt;
  }

  get state(): TrackState {
    return BY_INDEX[this.packed % REORG]!;
  }

  set state(s: TrackState) {
    this.packed += INDEX[s] - (this.packed % REORG);
  }

  /** Reorgs that took it out (counted up to 255). */
  get reorgs(): number {
    return Math.floor(this.packed / REORG) % (MAX_REORGS + 1);
  }

  set reorgs(n: number) {
    this.packed += (Math.min(Math.max(0, n), MAX_REORGS) - this.reorgs) * REORG;
  }

  /** Bumped on every move: the order of the changes pushed for it. */
  get version(): number {
    return Math.floor(this.packed / VERSION);
  }

  set version(v: number) {
    this.packed = (this.packed % VERSION) + v * VERSION;
  }

  get acceptedAt(): number {
    return EPOCH + this.acceptedMs;
  }

  get receivedAt(): number {
    return this.acceptedAt - this.receivedMs;
  }

  get updatedAt(): number {
    return this.acceptedAt + this.updatedMs;
  }

  set updatedAt(t: number) {
    this.updatedMs = t - this.acceptedAt;
  }
}

export interface TableCounts {
  /** Final entries dropped from a full table before their `keepMs`. */
  evicted: number;
  /** Acceptances not tracked: the table was full of pending entries. */
  refused: number;
}

export class TrackTable {
  /** Every entry, by hash (an index keyed by the hash's last 8 hex characters: hash-index.ts). */
  private readonly all = new HashIndex<Entry>();
  /** Final entries, oldest final first (re-entered when a reorg makes one final again). */
  private readonly finals = new Set<Entry>();
  readonly counts: TableCounts = { evicted: 0, refused: 0 };

  constructor(
    private readonly max: number,
    private readonly keepMs: number,
    /** Told after every move (and the first state), once. */
    private readonly changed: (e: Entry, from: TrackState | null) => void,
  ) {}

  /** Senders seen, one string each (a desk sends from few addresses: its entries share them). */
  private readonly senders = new Interned(4096);

  /** The one copy of a sender's address string (bounded: past 4,096 addresses it starts over). */
  sender(address: string): string {
    return this.senders.of(address);
  }

  get size(): number {
    return this.all.size;
  }

  get pending(): number {
    return this.all.size - this.finals.size;
  }

  get(hash: string): Entry | undefined {
    return this.all.get(hash);
  }

  /** Tracks a new acceptance (true); false when its hash is tracked already (that entry is kept) or the table is full of pending entries (not tracked, counted). */
  add(e: Entry): boolean {
    const key = keyOf(e.hash);
    if (this.all.size >= this.max) {
      if (this.all.getAt(key, e.hash) !== undefined) return false;
      const oldest = this.finals.values().next();
      if (oldest.done === true) {
        this.counts.refused++;
        return false;
      }
      this.remove(oldest.value);
      this.counts.evicted++;
    }
    if (!this.all.addAt(key, e)) return false;
    this.changed(e, null);
    return true;
  }

  /**
   * A new life of a hash the table found dropped: `next` (a new acceptance of the same bytes)
   * takes its place, pending, one version on (the pushes stay in order), its reorgs carried.
   */
  revive(old: Entry, next: Entry): void {
    if (old.state !== 'dropped' || !mayMove('dropped', 'pending')) throw new Error(`tracker: no transition ${old.state} -> pending`);
    next.version = old.version + 1;
    next.reorgs = old.reorgs;
    this.finals.delete(old);
    this.all.set(next);
    this.changed(next, 'dropped');
  }

  /** Moves an entry along a listed transition (else throws: a bug, never the chain's input). */
  move(e: Entry, to: TrackState, now: number): void {
    const from = e.state;
    if (!mayMove(from, to)) throw new Error(`tracker: no transition ${from} -> ${to}`);
    e.state = to;
    e.version++;
    e.updatedAt = now;
    if (isFinal(to)) {
      this.finals.delete(e);
      this.finals.add(e);
    } else this.finals.delete(e);
    this.changed(e, from);
  }

  /** Final entries past `keepMs` leave the table. */
  sweep(now: number): void {
    for (const e of this.finals) {
      if (now - e.updatedAt < this.keepMs) break;
      this.remove(e);
    }
  }

  /** The entries in no canonical block: pending or preconfirmed (the watcher's lookups after blocks skipped). */
  *pendingEntries(): IterableIterator<Entry> {
    for (const e of this.all.values()) if (inNoBlock(e.state)) yield e;
  }

  /** Entries in a given block (a reorg takes them out), included or replaced there. */
  *inBlock(blockHash: string): IterableIterator<Entry> {
    for (const e of this.all.values()) if (e.at !== null && e.at.kind !== 'preconfirmed' && e.at.hash === blockHash && !inNoBlock(e.state)) yield e;
  }

  /** Entries in any block (a reorg deeper than remembered takes them all out). */
  inAnyBlock(): Entry[] {
    return [...this.all.values()].filter((e) => e.at !== null && e.at.kind !== 'preconfirmed' && !inNoBlock(e.state));
  }

  private remove(e: Entry): void {
    this.all.delete(e);
    this.finals.delete(e);
  }
}

/** What the chain told of a tracked transaction (its sender, its nonce): kept, and its bytes let go once both are known. */
export function learn(table: TrackTable, e: Entry, told: { readonly from: string | null; readonly nonce: number | null }): void {
  if (e.sender === null && told.from !== null) e.sender = table.sender(told.from);
  if (e.nonce === null && told.nonce !== null) e.nonce = told.nonce;
  if (e.sender !== null && e.nonce !== null) e.raw = null;
}
