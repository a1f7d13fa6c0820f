/**
 * The drop/replace check: run only for pending entries past both thresholds (`dropAfterBlocks`
 * blocks and `dropAfterMs` since acceptance), oldest first, in batches. The chain is asked for
 * the hash: known (in its pool or a block), the entry waits another `dropAfterBlocks`; not
 * known, the sender's nonce on the chain decides: used by another transaction, `replaced` (the
 * replacement found by a search over the blocks since acceptance); unused, `dropped`.
 * Entries join the queue in acceptance order and re-join at its end, so the queue stays in
 * due order and a pass reads only the entries that are due.
 */
import type { TrackConfig } from '../config/config.js';
import { findByNonce, readSeen, type Receipt } from './blocks.js';
import type { ChainRpc } from '../upstreams/chain-rpc/chain-rpc.js';
import { CALL_MS, hash32, hexQuantity as hex, quantity } from '../base/rpc-values.js';
import { learn, type Entry, type TrackTable } from './table.js';
import { inNoBlock } from './states.js';
import { Queue } from '../upstreams/queue.js';
import { BLOCK_METHOD, LOOKUP_METHOD, NONCE_METHOD } from '../rpc/rpc-methods.js';

/** Entries checked per pass at most (the rest wait for the next). */
const MAX_PER_PASS = 1_000;

export class DueChecks {
  /** Accepted since the last pass (or taken out by a reorg, or without a receipt yet): looked up once by hash. */
  fresh: Entry[] = [];
  /** In due order: acceptance order, and a re-check at the end. */
  private readonly queue = new Queue<Entry>();

  constructor(
    private readonly config: TrackConfig,
    private readonly table: TrackTable,
    private readonly rpc: ChainRpc,
    /** The sender and nonce of signed bytes (an acceptance the chain did not tell of), or null. */
    private readonly recover: (raw: string) => { sender: string; nonce: number } | null,
    /** A pending entry the chain says is in a block: its receipt read, and included if canonical. */
    private readonly inBlock: (e: Entry, r: Receipt | null, signal: AbortSignal) => Promise<void>,
  ) {}

  add(e: Entry): void {
    this.queue.push(e);
  }

  get size(): number {
    return this.queue.length;
  }

  /** Checks the entries due at block `head` and time `now` (`signal`: the pass's, aborted once it was abandoned). */
  async run(head: number, now: number, signal: AbortSignal): Promise<void> {
    const due: Entry[] = [];
    while (due.length < MAX_PER_PASS) {
      const e = this.queue.peek();
      if (e === undefined) break;
      if (e.state !== 'pending') {
        this.queue.shift();
        continue;
      }
      if (e.checkFrom > head || now - e.acceptedAt < this.config.dropAfterMs) break;
      this.queue.shift();
      due.push(e);
    }
    if (due.length === 0) return;
    const seen = await this.rpc.batch(
      due.map((e) => ({ method: LOOKUP_METHOD, params: [e.hash] })),
      { timeoutMs: CALL_MS, signal },
    );
    if (signal.aborted) return this.requeue(due, head);
    const unknown: Entry[] = [];
    const later: Entry[] = [];
    for (let i = 0; i < due.length; i++) {
      const e = due[i]!;
      const g = seen[i]!;
      const s = g.kind === 'result' ? readSeen(g.result, e.hash) : undefined;
      if (s === null) unknown.push(e);
      else {
        if (s !== undefined) learn(this.table, e, s);
        if (s !== undefined && s.blockNumber !== null) await this.inBlock(e, null, signal);
        later.push(e);
      }
    }
    this.requeue(later, head);
    if (unknown.length > 0) await this.nonces(unknown, head, signal);
  }

  /** Entries the chain does not know: the sender's nonce says replaced or dropped. */
  private async nonces(entries: Entry[], head: number, signal: AbortSignal): Promise<void> {
    for (const e of entries) {
      if ((e.sender === null || e.nonce === null) && e.raw !== null) {
        const r = this.recover(e.raw);
        if (r !== null) learn(this.table, e, { from: r.sender, nonce: r.nonce });
      }
      e.raw = null;
    }
    const known = entries.filter((e): e is Entry & { sender: string; nonce: number } => e.sender !== null && e.nonce !== null);
    const counts = await this.rpc.batch(
      known.map((e) => ({ method: NONCE_METHOD, params: [e.sender, 'latest'] })),
      { timeoutMs: CALL_MS, signal },
    );
    if (signal.aborted) return this.requeue(entries, head);
    const now = Date.now();
    for (const e of entries) {
      if (e.state !== 'pending') continue;
      const i = known.indexOf(e as Entry & { sender: string; nonce: number });
      if (i < 0) {
        // No sender or nonce to ask about (bytes that do not decode): the chain does not know it.
        this.table.move(e, 'dropped', now);
        continue;
      }
      const g = counts[i]!;
      const n = g.kind === 'result' ? quantity(g.result) : null;
      if (n === null) {
        this.requeue([e], head);
        continue;
      }
      const k = known[i]!;
      if (n <= k.nonce) this.table.move(e, 'dropped', now);
      else await this.replaced(k, head, signal);
    }
  }

  /** The nonce was used by another transaction: which one, by a search for the block that used it. */
  private async replaced(e: Entry & { sender: string; nonce: number }, head: number, signal: AbortSignal): Promise<void> {
    const sender = e.sender;
    let lo = Math.max(0, e.sinceBlock - 1);
    let hi = head;
    const countAt = async (b: number): Promise<number | null> => {
      const g = await this.rpc.one(NONCE_METHOD, [sender, hex(b)], { timeoutMs: CALL_MS, signal });
      return g.kind === 'result' ? quantity(g.result) : null;
    };
    // The first block after which the nonce is used (lo: not yet, hi: used); unknown state: give up the search.
    const before = await countAt(lo);
    let found: number | null = null;
    if (before !== null && before <= e.nonce) {
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        const c = await countAt(mid);
        if (c === null) break;
        if (c > e.nonce) hi = mid;
        else lo = mid;
      }
      if (hi - lo === 1) found = hi;
    }
    if (e.state !== 'pending') return;
    if (found !== null) {
      const g = await this.rpc.one(BLOCK_METHOD, [hex(found), true], { timeoutMs: CALL_MS, signal });
      const by = g.kind === 'result' ? findByNonce(g.result, sender, e.nonce) : null;
      if (by === e.hash) return this.inBlock(e, null, signal); // it was this one after all
      if (by !== null && e.state === 'pending') {
        const bh = hash32((g as { result: { hash?: unknown } }).result.hash);
        if (bh !== null) e.at = { kind: 'replacement', number: found, hash: bh, by };
      }
    }
    if (e.state === 'pending') this.table.move(e, 'replaced', Date.now());
  }

  /** Once after acceptance (or a reorg, or a missing receipt): by hash, its sender and whether a block has it already. */
  async lookupFresh(head: number, signal: AbortSignal): Promise<void> {
    const waiting = this.fresh.filter((e) => inNoBlock(e.state));
    const batch = waiting.length > 1000 ? waiting.slice(0, 1000) : waiting;
    this.fresh = waiting.length > 1000 ? waiting.slice(1000) : [];
    if (batch.length === 0) return;
    const seen = await this.rpc.batch(
      batch.map((e) => ({ method: LOOKUP_METHOD, params: [e.hash] })),
      { timeoutMs: CALL_MS, signal },
    );
    if (signal.aborted) return;
    const inBlock: Entry[] = [];
    batch.forEach((e, i) => {
      const g = seen[i]!;
      const s = g.kind === 'result' ? readSeen(g.result, e.hash) : undefined;
      if (s === undefined) return; // no answer: the due check asks again
      if (s !== null) learn(this.table, e, s);
      if (s !== null && s.blockNumber !== null && s.blockNumber <= head) inBlock.push(e);
    });
    for (const e of inBlock) await this.inBlock(e, null, signal);
  }

  private requeue(entries: readonly Entry[], head: number): void {
    for (const e of entries) {
      if (e.state !== 'pending') continue;
      e.checkFrom = head + this.config.dropAfterBlocks;
      this.queue.push(e);
    }
  }
}
