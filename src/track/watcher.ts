/**
 * One chain's watcher: it follows the chain's blocks and moves the tracked transactions
 * (docs/tracking.md). Its cost goes by block, not by transaction: each new block's transaction
 * hashes are fetched once and looked up in the table (O(transactions in the block)); receipts are
 * fetched only for tracked hashes found in it; a transaction is looked up by hash once after its
 * acceptance (its sender, and whether it was already in a block), and then only when it is past
 * its thresholds (the drop/replace check, checks.ts). A reorg is found by the parent hash and
 * walked back to the common ancestor over the last `reorgDepth` blocks remembered; deeper, every
 * included entry is looked up again. Passes run one at a time, woken by a new head (the head
 * subscription where live) or every `pollMs`; a pass that has not ended in `stallMs` is abandoned
 * (its AbortSignal aborted: its calls to the chain RPC cut, its results ignored) and a fresh one started.
 */
import type { TrackConfig } from '../config/config.js';
import type { Logger } from '../log/log.js';
import { readBlock, readReceipt, type Block, type Receipt } from './blocks.js';
import { type ChainRpc, failureText } from '../upstreams/chain-rpc/chain-rpc.js';
import { DueChecks } from './checks.js';
import type { Entry, TrackTable } from './table.js';
import { BLOCK_METHOD, RECEIPT_METHOD } from '../rpc/rpc-methods.js';
import type { WatchHooks, WatchState } from './watch-state.js';
import { inNoBlock } from './states.js';
import type { HeadSource } from '../upstreams/chain-rpc/chain-heads.js';
import { CALL_MS, hexQuantity as hex, quantity } from '../base/rpc-values.js';

/** Blocks read per pass at most: a watcher far behind jumps ahead (the skipped ones are found by the lookups). */
const MAX_BLOCKS_PER_PASS = 256;

export class Watcher implements WatchState {
  head = -1;
  chainHead = -1;
  stalled = false;
  restarts = 0;
  problem: string | null = null;
  /** The last `reorgDepth` canonical blocks: number → hash, time. */
  private readonly canon = new Map<number, { hash: string; time: number }>();
  private readonly due: DueChecks;
  private running = false;
  private again = false;
  /** The running pass's cancellation: aborted when it is abandoned (a stall) or the watcher closes. */
  private pass: AbortController | null = null;
  private passStarted = 0;
  private timer: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout;
  private unlisten: (() => void) | null = null;
  private closed = false;
  /** Set by a restart after a lag: the next pass starts within `maxLagBlocks` of the chain's head. */
  private jump = false;

  constructor(
    private readonly config: TrackConfig,
    private readonly table: TrackTable,
    private readonly rpc: ChainRpc,
    private readonly log: Logger,
    /** Told of every block applied, with the time it was seen (the inclusion latency). */
    private readonly included: (e: Entry, r: Receipt, time: number, seenAt: number) => void,
    /** Moves a pending entry to `dropped` or `replaced` (checks.ts decides). */
    recover: (raw: string) => { sender: string; nonce: number } | null,
    heads: HeadSource | null,
    private readonly hooks: WatchHooks = {},
  ) {
    this.due = new DueChecks(config, table, rpc, recover, (e, r, signal) => this.includeVia(e, r, signal));
    this.unlisten = heads?.subscribe(() => this.wake()) ?? null;
    this.watchdog = setInterval(() => this.checkStall(), Math.max(250, config.stallMs / 4));
    this.watchdog.unref();
    this.schedule(heads);
    this.wake();
  }

  /** A new acceptance (or a preconfirmation the sealed block left out): looked up at the next pass, checked once past its thresholds. */
  track(e: Entry): void {
    e.sinceBlock = Math.max(this.head, 0);
    e.checkFrom = e.sinceBlock + this.config.dropAfterBlocks;
    this.due.fresh.push(e);
    this.due.add(e);
  }

  /** Runs a pass now, or right after the one running. */
  wake(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    void this.run();
  }

  private schedule(heads: HeadSource | null): void {
    // The poll: every pollMs without a live subscription, ten times rarer with one (a backstop).
    const tick = () => {
      if (this.closed) return;
      this.wake();
      this.timer = setTimeout(tick, heads?.live === true ? this.config.pollMs * 10 : this.config.pollMs);
      this.timer.unref();
    };
    this.timer = setTimeout(tick, this.config.pollMs);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    this.running = true;
    const pass = new AbortController();
    this.pass = pass;
    const { signal } = pass;
    this.passStarted = performance.now();
    try {
      do {
        this.again = false;
        await this.onePass(signal);
        if (signal.aborted) return;
        this.stalled = this.lagging();
      } while (this.again && !this.closed);
    } catch (e) {
      // A bug, never the chain's input (read into values or null): said, and the next pass runs.
      this.problem = `watcher pass failed: ${e instanceof Error ? e.message : String(e)}`.slice(0, 300);
      this.log.error({ err: e }, 'tracker: a watcher pass failed');
    } finally {
      if (this.pass === pass) {
        this.pass = null;
        this.running = false;
      }
    }
  }

  /**
   * Past the lag bound: the head applied is more than `maxLagBlocks` behind the chain's last read
   * (blocks that do not come, a pass that ends early every time): a stall, said and restarted.
   */
  private lagging(): boolean {
    const lag = this.chainHead - this.head;
    if (this.head < 0 || lag <= this.config.maxLagBlocks) return false;
    this.problem = `the watcher's head ${this.head} lags the chain's ${this.chainHead} by more than ${this.config.maxLagBlocks} blocks: restarted`;
    if (!this.stalled) {
      // Restarted: the next pass starts within the bound of the chain's head (the blocks skipped
      // are found by looking every pending transaction up again).
      this.restarts++;
      this.jump = true;
      this.log.warn({ head: this.head, chainHead: this.chainHead, maxLagBlocks: this.config.maxLagBlocks }, 'tracker: the watcher lags the chain; restarted');
    }
    return true;
  }

  private checkStall(): void {
    if (!this.running || performance.now() - this.passStarted < this.config.stallMs) return;
    this.pass?.abort();
    this.pass = null;
    this.running = false;
    this.stalled = true;
    this.restarts++;
    this.problem = `a watcher pass did not end within ${this.config.stallMs} ms: restarted`;
    this.log.warn({ stallMs: this.config.stallMs }, 'tracker: the watcher stalled (the chain RPC did not answer in time); restarted');
    this.wake();
  }

  /** One pass: new blocks (and reorgs), the fresh lookups, the due checks, the sweep. */
  private async onePass(signal: AbortSignal): Promise<void> {
    this.hooks.beforePass?.();
    const latest = await this.rpc.one('eth_blockNumber', [], { timeoutMs: CALL_MS, signal });
    const n = latest.kind === 'result' ? quantity(latest.result) : null;
    if (signal.aborted) return;
    if (n === null) {
      this.problem = `chain RPC eth_blockNumber: ${latest.kind === 'result' ? 'not a block number' : failureText(latest)}`;
      return;
    }
    this.chainHead = n;
    if (this.head < 0) {
      const b = await this.block(n, signal);
      if (b === null || signal.aborted) return;
      this.remember(b);
      this.head = n;
    } else if (n <= this.head) {
      // No new block: the head may have been replaced at its height (a reorg of the same length, a rollback).
      const b = await this.block(n, signal);
      if (b === null || signal.aborted) return;
      if (this.canon.get(n)?.hash !== b.hash) await this.reorg(n, signal);
      else if (n < this.head) {
        // Rolled back: the blocks above it are gone.
        this.log.warn({ from: this.head, to: n }, 'tracker: the chain rolled back');
        this.dropAbove(n);
      }
    }
    let next = Math.max(this.head + 1, n - (this.jump ? Math.min(MAX_BLOCKS_PER_PASS, this.config.maxLagBlocks) : MAX_BLOCKS_PER_PASS) + 1);
    this.jump = false;
    if (next > this.head + 1 && this.head >= 0) {
      // Blocks skipped: what they hold is found by looking every pending transaction up.
      this.log.warn({ from: this.head + 1, to: next - 1 }, 'tracker: blocks skipped; every pending transaction is looked up');
      this.due.fresh = [...this.table.pendingEntries()];
    }
    while (next <= n && !signal.aborted) {
      const b = await this.block(next, signal);
      if (b === null || signal.aborted) return;
      const parent = this.canon.get(next - 1);
      if (parent !== undefined && parent.hash !== b.parent) {
        const ancestor = await this.reorg(next - 1, signal);
        if (ancestor === null) return; // the chain did not answer the walk back: the next pass tries again
        next = ancestor + 1;
        continue;
      }
      await this.apply(b, signal);
      next++;
    }
    if (signal.aborted) return;
    await this.due.lookupFresh(this.head, signal);
    if (signal.aborted) return;
    await this.due.run(this.head, Date.now(), signal);
    if (this.hooks.afterPass !== undefined && !signal.aborted)
      await this.hooks.afterPass(this.head, this.canon.get(this.head)?.time ?? -1, () => !signal.aborted);
    this.table.sweep(Date.now());
    if (this.chainHead - this.head <= this.config.maxLagBlocks) this.problem = null;
  }

  private async block(n: number, signal: AbortSignal): Promise<Block | null> {
    const got = await this.rpc.one(BLOCK_METHOD, [hex(n), false], { timeoutMs: CALL_MS, signal });
    const b = got.kind === 'result' ? readBlock(got.result, n) : null;
    // An abandoned pass's cut call says nothing of the chain (the stall said why).
    if (b === null && !signal.aborted)
      this.problem = `chain RPC eth_getBlockByNumber ${n}: ${got.kind === 'result' ? (got.result === null ? 'no such block' : 'not that block') : failureText(got)}`;
    return b;
  }

  private remember(b: Block): void {
    this.canon.set(b.number, { hash: b.hash, time: b.time });
    this.canon.delete(b.number - this.config.reorgDepth);
  }

  /** A new canonical block: its tracked transactions, their receipts. */
  private async apply(b: Block, signal: AbortSignal): Promise<void> {
    const seenAt = Date.now();
    let found: Entry[] | null = null;
    const table = this.table;
    for (const h of b.txs) {
      if (typeof h !== 'string') continue;
      const e = table.get(h);
      if (e !== undefined && inNoBlock(e.state)) (found ??= []).push(e);
    }
    if (found !== null) {
      const got = await this.rpc.batch(
        found.map((e) => ({ method: RECEIPT_METHOD, params: [e.hash] })),
        { timeoutMs: CALL_MS, signal },
      );
      if (signal.aborted) return;
      found.forEach((e, i) => {
        const g = got[i]!;
        const r = g.kind === 'result' ? readReceipt(g.result, e.hash) : null;
        if (r !== null && r.blockHash === b.hash && inNoBlock(e.state)) this.included(e, r, b.time, seenAt);
        else this.due.fresh.push(e); // no receipt yet (a node behind its head): looked up again next pass
      });
    }
    this.hooks.sealed?.(b);
    this.remember(b);
    this.head = b.number;
  }

  /**
   * A reorg under block `from`: the blocks remembered are compared from `from` down with the
   * chain's; each that differs is taken out (its entries back to pending), down to the common
   * ancestor, whose number is returned (null: the chain did not answer the walk, or the pass was
   * abandoned). Deeper than remembered: every entry in a block is looked up again and the walk
   * restarts from the chain's block.
   */
  private async reorg(from: number, signal: AbortSignal): Promise<number | null> {
    let k = from;
    for (; k >= 0; k--) {
      const mine = this.canon.get(k);
      if (mine === undefined) break;
      const b = await this.block(k, signal);
      if (signal.aborted || b === null) return null;
      if (b.hash === mine.hash) {
        this.dropAbove(k);
        this.log.warn({ ancestor: k, depth: from - k }, 'tracker: reorg');
        return k;
      }
    }
    // Deeper than remembered (or the chain rolled back below our first block).
    this.log.warn({ from, depth: this.config.reorgDepth }, 'tracker: reorg deeper than remembered: every included transaction is looked up again');
    this.dropAbove(-1);
    for (const e of this.table.inAnyBlock()) this.unapply(e);
    this.head = Math.max(-1, k);
    if (this.head < 0) return -1;
    const b = await this.block(this.head, signal);
    if (b !== null) this.remember(b);
    return this.head;
  }

  /** Forgets the blocks above `k` (their entries back to pending). */
  private dropAbove(k: number): void {
    for (const [n, b] of [...this.canon]) {
      if (n <= k) continue;
      for (const e of [...this.table.inBlock(b.hash)]) this.unapply(e);
      this.canon.delete(n);
    }
    this.head = Math.min(this.head, k);
  }

  private unapply(e: Entry): void {
    if (inNoBlock(e.state)) return;
    e.at = null;
    e.reorgs++;
    this.table.move(e, 'pending', Date.now());
    this.due.fresh.push(e);
    e.checkFrom = Math.max(0, this.head) + this.config.dropAfterBlocks;
    this.due.add(e);
  }

  /** A pending entry the chain says is in a block already applied: its receipt, if the block is canonical. */
  private async includeVia(e: Entry, known: Receipt | null, signal: AbortSignal): Promise<void> {
    let r = known;
    if (r === null) {
      const g = await this.rpc.one(RECEIPT_METHOD, [e.hash], { timeoutMs: CALL_MS, signal });
      r = g.kind === 'result' ? readReceipt(g.result, e.hash) : null;
    }
    if (r === null || !inNoBlock(e.state) || r.blockNumber > this.head) return; // a block not applied yet brings it
    let b: { hash: string; time: number } | null | undefined = this.canon.get(r.blockNumber);
    // A block the watcher skipped (it jumped ahead, or is older than the blocks remembered): read to see it is canonical.
    if (b === undefined) b = await this.block(r.blockNumber, signal);
    if (b === null || b.hash !== r.blockHash || !inNoBlock(e.state)) return; // not canonical: a later block or lookup brings it
    this.included(e, r, b.time, Date.now());
  }

  close(): void {
    this.closed = true;
    this.pass?.abort();
    clearInterval(this.watchdog);
    if (this.timer !== null) clearTimeout(this.timer);
    this.unlisten?.();
  }
}
