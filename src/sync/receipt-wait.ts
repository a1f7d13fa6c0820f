/**
 * The sync send's `receipt` mode (docs/design.md §6.2): the plain send, then the chain RPC asked
 * for the receipt within the wait, on each head (`rpcWs`) else every `pollMs`; a 502 waits too
 * (the receipt, else code 4 where the chain RPC knows the hash, else the 502).
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { Exit } from '../base/errors.js';
import type { ChainLink } from '../forward/chain-link.js';
import type { ForwardRequest } from '../forward/parts.js';
import type { Upstream } from '../upstreams/upstream.js';
import type { HeadSource } from '../upstreams/chain-rpc/chain-heads.js';
import { askReceipt, pendingAnswer, type ReceiptFields } from './receipt.js';
import { preconfWait } from './preconfirmed.js';
import type { FlashblocksSource } from '../flashblocks/feed.js';

/** While the head subscription is live, a call asks on each head and after this many `pollMs` without one (a stalled subscription). */
const BACKSTOP_POLLS = 10;

/** How a receipt-mode call ended: the answer, and the receipt when one came (for the `sync receipt` line). */
export interface ReceiptCallEnd {
  readonly exit: Exit;
  readonly receipt: ReceiptFields | null;
  /** Answered at the preconfirmation (preconfirmed.ts), not at the sealed block. */
  readonly preconfirmed?: boolean;
}

/** A call's receipt requests, stopped once its preconfirmation answered it. */
interface Stop {
  done: boolean;
  wake: (() => void) | null;
}

export class ReceiptWaiter {
  /** Set by drain: a call still asking answers at once. */
  private draining = false;
  /** Woken by a head, a change of the subscription's state, or drain. */
  private readonly wakers = new Set<() => void>();
  private readonly unsubscribe: (() => void) | null;

  constructor(
    /** The chain's outcome rules (their lookup) and its chain RPC (`rpc`: no sequencer, nothing marks it down). */
    private readonly link: ChainLink,
    private readonly rpc: Upstream,
    /** The chain's plain send (the forwarder's). */
    private readonly send: (req: ForwardRequest) => Exit | PromiseLike<Exit>,
    /** The chain's head source (its news come only from `chains[].rpcWs`), else null. */
    private readonly heads: HeadSource | null,
    /** The `receipt` mode's flashblocks stream, else null: opened now, a preconfirmation being read only from a stream already reading. */
    private readonly flashblocks: FlashblocksSource | null,
  ) {
    this.unsubscribe = heads?.subscribe(() => this.wake()) ?? null;
    flashblocks?.open();
  }

  /** The plain send, then its receipt until `deadline` (performance.now() ms), or its preconfirmation if first (`sealed`: never). */
  async obtain(req: ForwardRequest, deadline: number, sealed: boolean): Promise<ReceiptCallEnd> {
    // Armed before the send: a slice may carry the transaction before the sequencer's answer arrives.
    const pre = this.flashblocks === null || sealed ? null : preconfWait(this.flashblocks, req.hash);
    try {
      const sent = await this.send(req);
      // Uncertain (written, no answer): settled by the receipt, the chain knowing the hash, or a preconfirmation.
      if (sent.reason !== 'ok' && sent.reason !== 'upstream_error') return { exit: sent, receipt: null };
      const stop: Stop = { done: false, wake: null };
      const asked = this.ask(req, deadline, sent, stop);
      const end = await (pre === null ? asked : Promise.race([asked, pre.answer.then((a) => ({ ...a, preconfirmed: true }))]));
      stop.done = true;
      stop.wake?.();
      // The send's answer headers (the lane that carried it: forward/express-send.ts) stay on the answer.
      return sent.headers === undefined || end.exit === sent ? end : { ...end, exit: end.exit.withHeaders(sent.headers) };
    } finally {
      pre?.stop();
    }
  }

  /** The receipt requests until the deadline, drain or `stop`. */
  private async ask(req: ForwardRequest, deadline: number, sent: Exit, stop: Stop): Promise<ReceiptCallEnd> {
    const { sync, forward } = this.link.chain;
    for (;;) {
      if (stop.done) return { exit: sent, receipt: null };
      const left = deadline - performance.now();
      if (left <= 0 || this.draining) return { exit: await this.unanswered(req.hash, sent), receipt: null };
      const seen = this.heads?.count;
      const got = await askReceipt(this.rpc, req.hash, left, forward);
      if (got !== null) return got;
      // Not yet (null, an error or a fault): asked again within the wait, at the next head (at
      // once if one came while asking) or after the interval.
      const live = this.heads?.live === true;
      if (live && this.heads!.count !== seen) continue;
      await this.pause(Math.min(live ? sync.pollMs * BACKSTOP_POLLS : sync.pollMs, deadline - performance.now()), stop);
    }
  }

  /** No receipt within the wait: code 4 with the hash; for an uncertain send, only where the chain RPC knows the hash. */
  private async unanswered(hash: string, sent: Exit): Promise<Exit> {
    if (sent.reason !== 'upstream_error') return pendingAnswer(hash);
    const known = await this.link.attempts.lookup(this.rpc, hash, performance.now() + this.link.chain.forward.timeoutMs);
    return known === 'known' ? pendingAnswer(hash) : sent;
  }

  /** Every call still waiting answers now (code 4 with its hash): the service is stopping. */
  drain(): void {
    this.draining = true;
    this.wake();
  }

  private wake(): void {
    for (const wake of this.wakers) wake();
  }

  /** `ms`, or less: woken by `wake` or by `stop`. */
  private pause(ms: number, stop: Stop): Promise<void> {
    if (ms <= 0 || this.draining) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.wakers.delete(done);
        stop.wake = null;
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wakers.add(done);
      stop.wake = done;
    });
  }

  close(): void {
    this.unsubscribe?.();
  }
}
