/**
 * Following one chain's accepted transactions to their block (`chains[].track`, off by default;
 * docs/tracking.md): the status table, its watcher, the hooks where an acceptance becomes known,
 * and the status answers. Per thread: each worker thread tracks what it accepted (a status asked
 * of another thread, or another edge, is answered from the chain).
 *
 * An acceptance becomes known in two places, both outside the forward code: the forward's
 * observer (`attemptAccepted`: which sequencer, which rule) and the send's answer (`wrap`,
 * `wrapSync`: a 200 with the hash, or the sync send's receipt or code 4). A chain without
 * tracking gets neither: its sends are the forwarder's own.
 */
import type { ChainConfig } from '../config.js';
import { Exit, reject } from '../errors.js';
import type { Logger } from '../log.js';
import { TxDecoder } from '../tx/decoder.js';
import { readReceipt, type Receipt } from './blocks.js';
import { ChainRpc } from './chain-rpc.js';
import type { TrackState } from './states.js';
import { chainStatus, entryStatus } from './status.js';
import { Entry, TrackTable } from './table.js';
import { Watcher, type HeadSource, type WatchState } from './watcher.js';

/** What a submission tells the tracker beside the forward's request: its nonce, and when it arrived (performance.now()). */
export interface Submitted {
  readonly tx: { readonly nonce: bigint };
  readonly t0: number;
}

/** The forward's request, as far as tracking reads it. */
export interface Forwarded {
  readonly hash: string;
  readonly rawHex: string;
  readonly account: string;
  readonly sender: string | null;
}

type Answer = Exit | Promise<Exit>;

/** The tracker's metrics hooks. */
export interface TrackObserver {
  /** An entry moved (`from` null: tracking began). */
  changed?(chainId: number, e: Entry, from: TrackState | null): void;
}

/** Told of every change of an entry: the entry and its status object. */
export type ChangeListener = (e: Entry, status: string) => void;

const ACCEPTING_RULES: ReadonlySet<string> = new Set(['hash', 'lookup', 'resend']);

export class Tracker {
  readonly table: TrackTable;
  readonly watcher: WatchState;
  private readonly watch: Watcher;
  private readonly rpc: ChainRpc;
  /** Which sequencer and rule accepted a hash in flight (the forward's observer), until its answer. */
  private readonly forwardedBy = new Map<string, string>();
  private readonly listeners = new Set<ChangeListener>();
  private readonly chainId: number;

  constructor(
    chain: ChainConfig,
    private readonly log: Logger,
    heads: HeadSource | null,
    private readonly observer: TrackObserver = {},
  ) {
    this.chainId = chain.chainId;
    const cfg = chain.track;
    this.rpc = new ChainRpc(chain.rpc!);
    this.table = new TrackTable(cfg.maxTracked, cfg.keepMs, (e, from) => this.tell(e, from));
    const decoder = new TxDecoder(chain.chainId, chain.hardfork, { signature: 'recover' });
    const recover = (raw: string): string | null => {
      const tx = decoder.decode(Buffer.from(raw.slice(2), 'hex'), { txTypes: new Set([0, 1, 2, 4]) });
      if (tx instanceof Exit) return null;
      const s = tx.sender();
      return typeof s === 'string' ? s : null;
    };
    this.watch = new Watcher(cfg, this.table, this.rpc, log, (e, r, time, seenAt) => this.include(e, r, time, seenAt), recover, heads);
    this.watcher = this.watch;
  }

  /** The forward's observer: a sequencer accepted `hash` by `rule` (called before the send answers). */
  attemptAccepted(hash: string, sequencer: string, rule: string): void {
    if (!ACCEPTING_RULES.has(rule) || this.forwardedBy.has(hash)) return;
    if (this.forwardedBy.size >= 65_536) this.forwardedBy.clear(); // answers that never came (a bound, not a path)
    this.forwardedBy.set(hash, `${sequencer}\n${rule}`);
  }

  /** The plain send of a tracked chain: the forwarder's, and its acceptance tracked. */
  wrap<S extends { forward(req: Forwarded): Answer }>(plain: S): { forward(req: Forwarded, about?: Submitted): Answer } {
    return {
      forward: (req, about) => this.follow(plain.forward(req), req, about, false),
    };
  }

  /** The sync send of a tracked chain: a receipt or code 4 is an acceptance too. */
  wrapSync<S extends { send(req: Forwarded, waitMs: number): Answer }>(sync: S): { send(req: Forwarded, waitMs: number, about?: Submitted): Answer } {
    return {
      send: (req, waitMs, about) => this.follow(sync.send(req, waitMs), req, about, true),
    };
  }

  private follow(out: Answer, req: Forwarded, about: Submitted | undefined, sync: boolean): Answer {
    if (out instanceof Exit) {
      this.settled(out, req, about, sync);
      return out;
    }
    return out.then((exit) => {
      this.settled(exit, req, about, sync);
      return exit;
    });
  }

  private settled(exit: Exit, req: Forwarded, about: Submitted | undefined, sync: boolean): void {
    const by = this.forwardedBy.get(req.hash);
    if (by !== undefined) this.forwardedBy.delete(req.hash);
    if (exit.reason !== 'ok' && !(sync && exit.reason === 'sync_timeout')) return;
    if (this.table.get(req.hash) !== undefined) return; // the same bytes again: tracked since the first
    const now = Date.now();
    const received = about === undefined ? now : Math.round(now - (performance.now() - about.t0));
    const cut = by === undefined ? -1 : by.indexOf('\n');
    const nonce = about === undefined ? -1 : Number(about.tx.nonce);
    const e = new Entry(
      req.hash,
      req.account,
      nonce,
      received,
      now,
      cut < 0 ? 'unknown' : by!.slice(0, cut),
      cut < 0 ? 'dedup' : by!.slice(cut + 1),
      req.sender,
      req.rawHex,
    );
    if (this.table.add(e)) this.watch.track(e);
  }

  private include(e: Entry, r: Receipt, time: number, seenAt: number): void {
    e.at = { number: r.blockNumber, hash: r.blockHash, index: r.index, gasUsed: r.gasUsed, time, seenAt, replacedBy: null };
    if (e.sender === null && r.from !== null) e.sender = this.table.sender(r.from);
    e.raw = null;
    this.table.move(e, r.ok ? 'included' : 'reverted', seenAt);
  }

  private tell(e: Entry, from: TrackState | null): void {
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
    if (inBlock && at !== null)
      Object.assign(line, { block: at.number, blockHash: at.hash, index: at.index, gasUsed: at.gasUsed, inclusionMs: at.seenAt - e.acceptedAt });
    if (e.state === 'replaced') Object.assign(line, { replacedBy: at?.replacedBy ?? null, block: at?.number ?? null });
    if (e.state === 'dropped' || e.state === 'replaced') line.pendingMs = e.updatedAt - e.acceptedAt;
    if (e.reorgs > 0) line.reorgs = e.reorgs;
    if (e.state === 'pending') this.log.warn(line, 'tracked transaction taken out by a reorg: pending again');
    else this.log.info(line, e.state);
  }

  /** Every change from now on; returns the unsubscription. */
  listen(fn: ChangeListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The status of a hash this edge tracks for `account`, or null (not tracked, or another account's). */
  own(account: string, hash: string): Entry | null {
    const e = this.table.get(hash);
    return e !== undefined && e.account === account ? e : null;
  }

  /**
   * txgate_getTransactionStatus: the entry of the account's own transaction; anything else
   * (unknown here, or another account's: answered alike) from the chain's receipt.
   */
  status(account: string, hash: string): Answer {
    const e = this.own(account, hash);
    if (e !== null) return statusExit(entryStatus(e, this.chainId));
    return this.fromChain(hash);
  }

  private async fromChain(hash: string): Promise<Exit> {
    const g = await this.rpc.one('eth_getTransactionReceipt', [hash], 5_000);
    if (!g.ok) return reject('chain_unavailable', undefined, { txHash: hash });
    if (g.value === null) return statusExit(chainStatus(hash, this.chainId, null));
    const r = readReceipt(g.value, hash);
    return r === null
      ? reject('chain_unavailable', 'The chain RPC answered something other than a receipt of this transaction', { txHash: hash })
      : statusExit(chainStatus(hash, this.chainId, r));
  }

  /** Its entry's status object (for the lane's subscription). */
  statusOf(e: Entry): string {
    return entryStatus(e, this.chainId);
  }

  close(): Promise<void> {
    this.watch.close();
    return this.rpc.close();
  }
}

function statusExit(json: string): Exit {
  return new Exit(200, 'ok', ',"result":' + json + '}');
}
