/**
 * Conditional transactions followed to `expired` (docs/conditional.md#followed-to-expired,
 * docs/tracking.md): a tracked transaction sent with a `blockNumberMax` or a `timestampMax`
 * whose bound the canonical chain has passed (a block above the number, or later than the time)
 * while the chain has it in no block can never be included: it moves to `expired` at the end of
 * the watcher's pass that saw that block, with the bound that ended it, without waiting for the
 * drop thresholds. A head back below the bound (a reorg, a rollback) brings it back to
 * `pending`. Before an entry expires the chain is asked for its hash once: a transaction the chain
 * has in a block (its receipt not read yet) is left to the watcher.
 *
 * Its cost goes by the conditional transactions tracked, once a pass; a chain without them pays
 * one empty loop.
 */
import { readSeen } from './blocks.js';
import type { ChainRpc } from '../upstreams/chain-rpc/chain-rpc.js';
import type { Entry, TrackTable } from './table.js';
import { LOOKUP_METHOD } from '../rpc/rpc-methods.js';
import { CALL_MS } from '../base/rpc-values.js';

export type Bound = 'blockNumberMax' | 'timestampMax';

/** The bounds a conditional transaction was sent with (conditional/options.ts), null where absent. */
export interface Bounds {
  readonly blockNumberMax: bigint | null;
  readonly timestampMax: bigint | null;
}

/** The chain's head after a pass: its number, its block's timestamp (s). */
export interface HeadBlock {
  readonly number: number;
  readonly time: number;
}

/**
 * The watcher's hook at the end of every pass (watcher.ts `afterPass`): the head it left (its
 * number, its block's timestamp in s, -1 when not held); `live()` false once the pass is abandoned.
 */
export type AfterPass = (head: number, time: number, live: () => boolean) => Promise<void>;

/** Which bound `head` has passed, if any. */
export function passed(b: Bounds, head: HeadBlock): Bound | null {
  if (b.blockNumberMax !== null && BigInt(head.number) > b.blockNumberMax) return 'blockNumberMax';
  if (b.timestampMax !== null && BigInt(head.time) > b.timestampMax) return 'timestampMax';
  return null;
}

export class Expiries {
  /** The tracked conditional transactions, by hash, while their entry is in the table. */
  private readonly watched = new Map<string, { readonly e: Entry; readonly b: Bounds }>();

  constructor(
    private readonly table: TrackTable,
    private readonly rpc: ChainRpc,
  ) {}

  /** A conditional transaction tracked from now. */
  watch(e: Entry, b: Bounds): void {
    if (b.blockNumberMax !== null || b.timestampMax !== null) this.watched.set(e.hash, { e, b });
  }

  get size(): number {
    return this.watched.size;
  }

  /** After a watcher pass, the head it left: the moves to and from `expired`; `live()` false: the pass was abandoned. */
  async run(head: HeadBlock, live: () => boolean): Promise<void> {
    if (this.watched.size === 0) return;
    let due: { e: Entry; bound: Bound }[] | null = null;
    for (const [hash, w] of this.watched) {
      const e = w.e;
      if (this.table.get(hash) !== e) {
        this.watched.delete(hash); // swept from the table
        continue;
      }
      const bound = passed(w.b, head);
      if (e.state === 'pending' && bound !== null) (due ??= []).push({ e, bound });
      else if (e.state === 'expired' && bound === null) {
        e.expiredBy = null;
        this.table.move(e, 'pending', Date.now());
      }
    }
    if (due === null) return;
    const seen = await this.rpc.batch(
      due.map((d) => ({ method: LOOKUP_METHOD, params: [d.e.hash] })),
      { timeoutMs: CALL_MS },
    );
    if (!live()) return;
    due.forEach((d, i) => {
      const g = seen[i]!;
      const s = g.kind === 'result' ? readSeen(g.result, d.e.hash) : undefined;
      // No answer: asked again next pass. In a block: the watcher includes it.
      if (s === undefined || (s !== null && s.blockNumber !== null) || d.e.state !== 'pending') return;
      d.e.expiredBy = { bound: d.bound, head: head.number };
      this.table.move(d.e, 'expired', Date.now());
    });
  }
}
