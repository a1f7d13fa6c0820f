/**
 * The chain's head as the conditions stage reads it (docs/conditional.md#what-the-edge-checks-itself), and the one rule
 * it applies: a `blockNumberMax` below the head's number, or a `timestampMax` below the head's
 * timestamp, can never be met again (every later block is higher and no earlier), so such a
 * submission is refused at once, nothing sent. Only a fresh head refuses: one older than
 * `headMaxAgeMs` (or none, or a chain without `rpc`) refuses nothing, and the sequencer decides.
 *
 * The head comes through a narrow view (`HeadView`), so where it is read from is the
 * composition root's choice: here, a poll of the chain RPC's latest block (HeadPoll).
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import { type Exit, reject } from '../base/errors.js';
import type { Logger } from '../log/log.js';
import { BLOCK_METHOD } from '../rpc/rpc-methods.js';
import type { Upstream } from '../upstreams/upstream.js';
import type { Conditions } from './options.js';

export interface Head {
  readonly number: bigint;
  readonly timestamp: bigint;
  /** When this edge saw it (performance.now()). */
  readonly seenAt: number;
}

/** Where the chain's head is read from: the latest one seen, or null before any. */
export interface HeadView {
  head(): Head | null;
}

/** The refusal of conditions the fresh head has passed, or null (forward them). */
export function passedBound(c: Conditions, head: Head | null, maxAgeMs: number, now: number): Exit | null {
  if (head === null || now - head.seenAt > maxAgeMs) return null;
  if (c.blockNumberMax !== null && head.number > c.blockNumberMax)
    return reject('conditions_expired', `Transaction rejected: the chain's head ${head.number} is past blockNumberMax ${c.blockNumberMax}`, {
      bound: 'blockNumberMax',
      head: `0x${head.number.toString(16)}`,
    });
  if (c.timestampMax !== null && head.timestamp > c.timestampMax)
    return reject('conditions_expired', `Transaction rejected: the chain's head timestamp ${head.timestamp} is past timestampMax ${c.timestampMax}`, {
      bound: 'timestampMax',
      head: `0x${head.number.toString(16)}`,
    });
  return null;
}

/**
 * A quantity a peer sent (0x-hex, at most 64 bits), or null: as wide as the bounds it is compared
 * with (conditional/options.ts), where base/rpc-values.ts's reader stops at a safe integer.
 */
function quantityOf(v: unknown): bigint | null {
  return typeof v === 'string' && /^0x[0-9a-fA-F]{1,16}$/.test(v) ? BigInt(v) : null;
}

/**
 * The latest block of the chain RPC, asked every `pollMs` (one call at a time, never queued
 * behind a slow one). Whatever the chain RPC answers that is not a block with a number and a
 * timestamp leaves the head as it was (and so, once old, refusing nothing).
 */
export class HeadPoll implements HeadView {
  private latest: Head | null = null;
  private busy = false;
  private readonly timer: NodeJS.Timeout;
  private warned = false;

  constructor(
    private readonly rpc: Upstream,
    pollMs: number,
    private readonly log: Logger,
  ) {
    this.timer = setInterval(() => void this.poll(), pollMs);
    this.timer.unref();
    void this.poll();
  }

  head(): Head | null {
    return this.latest;
  }

  private async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const a = await this.rpc.call(BLOCK_METHOD, '["latest",false]', { timeoutMs: 2000, queueMs: 500 });
      const b = a.kind === 'result' && typeof a.result === 'object' && a.result !== null ? (a.result as Record<string, unknown>) : null;
      const number = quantityOf(b?.number);
      const timestamp = quantityOf(b?.timestamp);
      if (number !== null && timestamp !== null) {
        // A head lower than the one held (a rollback, another node behind) is taken too: the freshest word counts.
        this.latest = { number, timestamp, seenAt: performance.now() };
        this.warned = false;
      } else if (!this.warned) {
        this.warned = true;
        this.log.warn(
          { answer: a.kind === 'fault' ? a.why : a.kind },
          'conditional: the chain RPC gave no latest block; the edge refuses no quote until it does',
        );
      }
    } catch {
      // An upstream's call never throws; nothing here may end the process if one did.
    } finally {
      this.busy = false;
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
