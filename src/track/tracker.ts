/**
 * Following one chain's accepted transactions to their block (`chains[].track`, off by default;
 * docs/tracking.md): the status table, its watcher, the hooks where an acceptance becomes known,
 * and the status answers. One per chain and process: with several worker threads the owner
 * thread holds it and the others reach it through the seam (seam/): the owner makes it, giving
 * itself as the tracker's hand-off (seam/owner.ts), and gives it each acceptance another thread
 * handed over, read back into the forward's request (`acceptedElsewhere`).
 *
 * An acceptance becomes known where it is decided: the forward's observer (forward/attempts.ts,
 * through observe.ts) tells `accepted` with the request, the sequencer and the rule, for the
 * plain send and the sync send alike, before the answer is written. A chain without tracking has
 * no such observer: nothing is added to its forwards.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { ChainConfig } from '../config/config.js';
import { EpochClock, waited } from '../base/epoch-clock.js';
import { Exit } from '../base/errors.js';
import type { Logger } from '../log/log.js';
import { TxDecoder } from '../tx/decoder.js';
import type { Receipt } from './blocks.js';
import { chainAnswer, statusExit } from './chain-status.js';
import type { ChainRpc } from '../upstreams/chain-rpc/chain-rpc.js';
import type { TrackState } from './states.js';
import { entryStatus } from './status.js';
import { Entry, TrackTable } from './table.js';
import { Watcher } from './watcher.js';
import type { TrackView, WatchState } from './watch-state.js';
import type { HeadSource } from '../upstreams/chain-rpc/chain-heads.js';
import { type Bounds, Expiries } from './expiry.js';
import type { FlashblocksSource } from '../flashblocks/feed.js';
import type { ForwardRequest } from '../forward/parts.js';
import { Preconfirmations } from './preconfirm.js';
import type { TrackedChain } from './tracked.js';

/** A status question's answer: now, or once the chain RPC told. */
type StatusExit = Exit | Promise<Exit>;

/** The tracker's metrics hooks. */
export interface TrackObserver {
  /** An entry moved (`from` null: tracking began). */
  changed?(chainId: number, e: Entry, from: TrackState | null): void;
}

/** What a tracker is built from besides its chain, named. */
export interface TrackerParts {
  /** The chain's RPC client (the chain link's: one per chain and thread); the tracker does not close it. */
  readonly rpc: ChainRpc;
  /** The chain's heads, where the chain has a head subscription. */
  readonly heads?: HeadSource | null | undefined;
  readonly observer?: TrackObserver | undefined;
  /** Told of a hash found dropped: the duplicate cache forgets it, so that a resend is forwarded (forward/dedup.ts). */
  readonly dropped?: ((hash: string) => void) | undefined;
  /** The chain's flashblocks stream, where it has one (`chains[].flashblocks`): `preconfirmed` (preconfirm.ts). */
  readonly flashblocks?: FlashblocksSource | null | undefined;
  /** With several worker threads, the owner's end of the seam (seam/owner.ts); else none. */
  readonly handOff?: HandOff | null | undefined;
}

/** What a tracker asks of the seam on the thread that owns it (seam/owner.ts). */
export interface HandOff {
  /** Takes the acceptances other threads handed over and this thread has not read yet: before every lookup of a hash and every watcher pass. */
  catchUp(): void;
  /** The tracker's listeners went from none to some (true) or back (false): the owner then reads acceptances as they are written, or when needed. */
  listening(on: boolean): void;
}

/** No other thread: nothing handed over. */
const ALONE: HandOff = { catchUp: () => undefined, listening: () => undefined };

/** Told of every change of an entry: the entry and its status object. */
export type ChangeListener = (e: Entry, status: string) => void;

export class Tracker implements TrackView, TrackedChain {
  private readonly table: TrackTable;
  readonly watcher: WatchState;
  private readonly watch: Watcher;
  private readonly rpc: ChainRpc;
  private readonly listeners = new Set<ChangeListener>();
  private readonly chainId: number;
  private readonly handOff: HandOff;

  private readonly observer: TrackObserver;
  private readonly clock = new EpochClock();
  private readonly dropped: (hash: string) => void;

  constructor(
    chain: ChainConfig,
    private readonly log: Logger,
    parts: TrackerParts,
  ) {
    this.chainId = chain.chainId;
    const cfg = chain.track;
    this.rpc = parts.rpc;
    this.observer = parts.observer ?? {};
    this.dropped = parts.dropped ?? ((): void => undefined);
    const heads = parts.heads ?? null;
    this.handOff = parts.handOff ?? ALONE;
    const handOff = this.handOff;
    this.table = new TrackTable(cfg.maxTracked, cfg.keepMs, (e, from) => this.tell(e, from));
    const decoder = new TxDecoder(chain.chainId, chain.hardfork, { signature: 'recover' });
    const recover = (raw: string): { sender: string; nonce: number } | null => {
      const tx = decoder.decode(Buffer.from(raw.slice(2), 'hex'), { txTypes: new Set([0, 1, 2, 4]) });
      if (tx instanceof Exit) return null;
      const sender = tx.sender();
      return typeof sender === 'string' && tx.nonce <= BigInt(Number.MAX_SAFE_INTEGER) ? { sender, nonce: Number(tx.nonce) } : null;
    };
    const expiries = new Expiries(this.table, this.rpc);
    this.expiries = expiries;
    const fb = parts.flashblocks ?? null;
    // The watcher's head and its new lookups, read when a slice comes (after this constructor).
    const pre =
      fb === null
        ? null
        : new Preconfirmations(
            this.table,
            fb,
            () => this.watch.head,
            () => handOff.catchUp(),
            (e) => this.watch.track(e),
          );
    this.preconfirmations = pre;
    this.watch = new Watcher(cfg, this.table, this.rpc, log, (e, r, time, seenAt) => this.include(e, r, time, seenAt), recover, heads, {
      beforePass: () => handOff.catchUp(),
      sealed: pre === null ? null : (b) => pre.sealed(b),
      afterPass: (number, time, live) => (time < 0 ? Promise.resolve() : expiries.run({ number, time }, live)),
    });
    this.watcher = this.watch;
  }

  private readonly expiries: Expiries;
  /** The chain's preconfirmations (null: no flashblocks stream). */
  private readonly preconfirmations: Preconfirmations | null;

  get pending(): number {
    return this.table.pending;
  }

  get final(): number {
    return this.table.size - this.table.pending;
  }

  get evicted(): number {
    return this.table.counts.evicted;
  }

  get refused(): number {
    return this.table.counts.refused;
  }

  get preconfirmationsLost(): number {
    return this.preconfirmations?.lost ?? 0;
  }

  /**
   * A sequencer accepted `req` by `rule` (the forward's observer, as the acceptance is decided):
   * tracked from now (the same bytes again, or another sequencer's acceptance of them, are
   * tracked once). Its nonce and sender come with the first lookup (or from its bytes).
   */
  accepted(req: ForwardRequest, sequencer: string, rule: string): void {
    // Called inside the forward: whatever goes wrong here must not change the submission's answer.
    try {
      // Epoch ms from the monotonic clock (one clock read here: base/epoch-clock.ts), the arrival
      // by the wait since it, as a handed acceptance's (seam/remote.ts).
      const t = performance.now();
      const now = this.clock.epochOf(t);
      const receivedAt = now - waited(req.t0, t);
      this.follow(
        new Entry({ hash: req.hash, account: req.account, receivedAt, acceptedAt: now, sequencer, rule, sender: this.senderOf(req.sender), raw: req.rawHex }),
        req.conditional,
      );
    } catch (err) {
      this.log.error({ err, tx: req.hash }, 'tracker: an acceptance could not be tracked (the submission is unaffected)');
    }
  }

  /**
   * An acceptance another thread of the process handed over (seam/owner.ts reads its record back
   * into the request): `req` accepted by `sequencer` and `rule` at `acceptedAt` (epoch ms, the
   * accepting thread's clock), `waited` ms after the request arrived there.
   */
  acceptedElsewhere(req: ForwardRequest, sequencer: string, rule: string, acceptedAt: number, waited: number): void {
    this.follow(
      new Entry({
        hash: req.hash,
        account: req.account,
        receivedAt: acceptedAt - waited,
        acceptedAt,
        sequencer,
        rule,
        sender: this.senderOf(req.sender),
        raw: req.rawHex,
      }),
      req.conditional,
    );
  }

  /** Acceptances another thread could not hand over (its owner was behind), or whose record did not read: counted as a full table's. */
  lostInHandOff(n: number): void {
    if (Number.isSafeInteger(n) && n > 0) this.table.counts.refused += n;
  }

  /** A policy's sender (a string of its own per request): the table's one copy. */
  private senderOf(sender: string | null): string | null {
    return sender === null ? null : this.table.sender(sender);
  }

  private follow(e: Entry, conditional: Bounds | undefined): void {
    if (this.table.add(e)) this.watch.track(e);
    else {
      // The same bytes accepted again after the tracker found them dropped: a new life of the hash.
      const old = this.table.get(e.hash);
      if (old === undefined || old.state !== 'dropped' || old.account !== e.account) return;
      this.table.revive(old, e);
      this.watch.track(e);
    }
    if (conditional !== undefined) this.expiries.watch(e, conditional);
    // A slice may have carried it before its acceptance was known here.
    this.preconfirmations?.accepted(e);
  }

  private include(e: Entry, r: Receipt, time: number, seenAt: number): void {
    e.at = { kind: 'block', number: r.blockNumber, hash: r.blockHash, index: r.index, gasUsed: r.gasUsed, time, seenAt };
    if (e.sender === null && r.from !== null) e.sender = this.table.sender(r.from);
    e.raw = null;
    this.table.move(e, r.ok ? 'included' : 'reverted', seenAt);
  }

  private tell(e: Entry, from: TrackState | null): void {
    if (e.state === 'dropped') this.dropped(e.hash);
    this.observer.changed?.(this.chainId, e, from);
    if (from !== null) this.audit(e, from);
    if (this.listeners.size === 0) return;
    const status = entryStatus(e, this.chainId);
    for (const l of this.listeners) l(e, status);
  }

  /**
   * The audit line of a move after acceptance: a final state with its figures (the block, the
   * latency from acceptance to the block seen, from receipt to acceptance), or a reorg's return to pending.
   */
  private audit(e: Entry, from: TrackState): void {
    if (e.state === 'preconfirmed') return; // not final: the status and the pushes say it
    const at = e.at;
    const inBlock = e.state === 'included' || e.state === 'reverted';
    const line: Record<string, unknown> = {
      audit: 'track',
      tx: e.hash,
      account: e.account,
      chainId: this.chainId,
      state: e.state,
      from,
      sequencer: e.sequencer,
      rule: e.rule,
      acceptMs: e.acceptedAt - e.receivedAt,
    };
    if (inBlock && at?.kind === 'block')
      Object.assign(line, { block: at.number, blockHash: at.hash, index: at.index, gasUsed: at.gasUsed, inclusionMs: at.seenAt - e.acceptedAt });
    if (e.state === 'replaced') Object.assign(line, at?.kind === 'replacement' ? { replacedBy: at.by, block: at.number } : { replacedBy: null, block: null });
    if (e.state === 'dropped' || e.state === 'replaced' || e.state === 'expired') line.pendingMs = e.updatedAt - e.acceptedAt;
    if (e.state === 'expired') line.expiredBy = e.expiredBy;
    if (e.reorgs > 0) line.reorgs = e.reorgs;
    if (from === 'preconfirmed' && e.state === 'pending') this.log.warn(line, 'tracked transaction preconfirmed and not in the sealed block: pending again');
    else if (from === 'dropped') this.log.info(line, 'tracked transaction accepted again after dropped: pending');
    else if (e.state === 'pending') this.log.warn(line, 'tracked transaction taken out by a reorg: pending again');
    else this.log.info(line, e.state);
  }

  /** Every change from now on; returns the unsubscription. */
  listen(fn: ChangeListener): () => void {
    this.listeners.add(fn);
    if (this.listeners.size === 1) this.handOff.listening(true);
    return () => {
      if (this.listeners.delete(fn) && this.listeners.size === 0) this.handOff.listening(false);
    };
  }

  /** The status of a hash this edge tracks for `account`, or null (not tracked, or another account's). */
  own(account: string, hash: string): Entry | null {
    this.handOff.catchUp();
    const e = this.table.get(hash);
    return e !== undefined && e.account === account ? e : null;
  }

  /**
   * txgate_getTransactionStatus: the entry of the account's own transaction; anything else
   * (unknown here, or another account's: answered alike) from the chain's receipt.
   */
  status(account: string, hash: string): StatusExit {
    const e = this.own(account, hash);
    if (e !== null) return statusExit(entryStatus(e, this.chainId));
    return this.fromChain(hash);
  }

  private fromChain(hash: string): Promise<Exit> {
    return chainAnswer(this.rpc, this.chainId, hash);
  }

  /** Its entry's status object (for a WebSocket subscription). */
  statusOf(e: Entry): string {
    return entryStatus(e, this.chainId);
  }

  close(): Promise<void> {
    this.preconfirmations?.close();
    this.watch.close();
    return Promise.resolve();
  }
}
