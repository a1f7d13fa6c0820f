/**
 * The sync send's `receipt` mode, for sequencers that take only eth_sendRawTransaction (an
 * Arbitrum sequencer endpoint): the plain send goes through the chain's forwarder (its failover,
 * duplicate suppression, audit line and outcome rules, unchanged), and once the sequencer has
 * accepted the transaction, the chain RPC is asked for its receipt until the wait runs out: on
 * every new head where the chain RPC's WebSocket subscription is live (`chains[].rpcWs`,
 * the chain's heads: upstreams/chain-rpc/chain-heads.ts), else every `pollMs`. A refusal or a send that never went is answered as the
 * plain send answers it (refused, 503 not sent); an accepted transaction is answered with its
 * receipt, or with EIP-7966's code 4 and its hash (never a failure: it was accepted). A send
 * written and not answered (502 uncertain) waits for the receipt too: it comes if the
 * transaction went in; if not, code 4 where the chain RPC knows the hash, else the plain send's
 * 502 with the hash. A receipt request that fails (the RPC down, a timeout) is retried until
 * the deadline: it says nothing about the transaction.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { ChainConfig } from '../config/config.js';
import type { Exit } from '../base/errors.js';
import type { Attempts } from '../forward/attempts.js';
import type { ForwardRequest } from '../forward/parts.js';
import type { CallTimes, Upstream } from '../upstreams/upstream.js';
import type { HeadSource } from '../upstreams/chain-rpc/chain-heads.js';
import { executedAnswer, isReceiptOf, pendingAnswer } from './receipt.js';
import { RECEIPT_METHOD } from '../rpc/rpc-methods.js';
import type { PreconfWait } from './preconfirmed.js';

/**
 * While the head subscription is live a call asks on each head, and also after this many
 * `pollMs` without one: the backstop against a subscription that stalls without closing.
 */
const BACKSTOP_POLLS = 10;

/** How a receipt-mode call ended: the answer, and the receipt when one came (for the audit and the metrics). */
export interface ReceiptCallEnd {
  readonly exit: Exit;
  readonly receipt: { readonly status?: unknown; readonly blockNumber?: unknown } | null;
  /** Answered at the preconfirmation (a slice's receipt: preconfirmed.ts), not the sealed block's. */
  readonly preconfirmed?: boolean;
}

/** A call's receipt requests, stopped once its preconfirmation answered it. */
interface Stop {
  done: boolean;
  wake: (() => void) | null;
}

export class ReceiptWaiter {
  /** Set by drain: a call still polling answers code 4 with its hash at once. */
  private draining = false;
  /** Woken by a head, a change of the subscription's state, or drain. */
  private readonly wakers = new Set<() => void>();
  private readonly unsubscribe: (() => void) | null;

  constructor(
    private readonly chain: ChainConfig,
    /**
     * The chain RPC (the chain link's client: called as a sequencer is, keep-alive connections of
     * its own, the same answer classification; it is no sequencer, nothing marks it down).
     */
    private readonly rpc: Upstream,
    /** The outcome rules' lookup (forward/attempts.ts). */
    private readonly attempts: Attempts,
    /** The chain's head source (the composition root's; its news come only from `chains[].rpcWs`), else null. */
    private readonly heads: HeadSource | null,
  ) {
    this.unsubscribe = heads?.subscribe(() => this.wake()) ?? null;
  }

  /**
   * Forwards with `send` (the plain path), then asks for the receipt until `deadline`
   * (performance.now() ms); with `pre` (a chain's flashblocks stream, armed before the send),
   * the preconfirmation's receipt answers it if it comes first.
   */
  async obtain(
    req: ForwardRequest,
    deadline: number,
    send: (req: ForwardRequest) => Exit | PromiseLike<Exit>,
    pre: PreconfWait | null = null,
  ): Promise<ReceiptCallEnd> {
    try {
      const sent = await send(req);
      const end = await this.follow(req, deadline, sent, pre);
      // The send's answer headers (the lane that carried it: forward/express-send.ts) stay on the answer.
      return sent.headers === undefined || end.exit === sent ? end : { ...end, exit: end.exit.withHeaders(sent.headers) };
    } finally {
      pre?.stop();
    }
  }

  private async follow(req: ForwardRequest, deadline: number, sent: Exit, pre: PreconfWait | null): Promise<ReceiptCallEnd> {
    // Uncertain (written, no answer): the receipt, or the chain knowing the hash, settles it (a
    // preconfirmation too: the transaction is in a slice).
    const uncertain = sent.reason === 'upstream_error';
    if (sent.reason !== 'ok' && !uncertain) return { exit: sent, receipt: null };
    if (pre === null) return this.ask(req, deadline, sent, null);
    const stop: Stop = { done: false, wake: null };
    const early = pre.answer.then((a): ReceiptCallEnd => ({ exit: a.exit, receipt: a.receipt, preconfirmed: true }));
    const end = await Promise.race([this.ask(req, deadline, sent, stop), early]);
    stop.done = true;
    stop.wake?.();
    return end;
  }

  /** The receipt requests until the deadline (or `stop`). */
  private async ask(req: ForwardRequest, deadline: number, sent: Exit, stop: Stop | null): Promise<ReceiptCallEnd> {
    const uncertain = sent.reason === 'upstream_error';
    const params = `["${req.hash}"]`;
    const { pollMs } = this.chain.sync;
    for (;;) {
      if (stop?.done === true) return { exit: sent, receipt: null };
      const left = deadline - performance.now();
      if (left <= 0 || this.draining) return { exit: uncertain ? await this.known(req.hash, sent) : pendingAnswer(req.hash), receipt: null };
      const times: CallTimes = {
        timeoutMs: Math.max(1, Math.min(left, this.chain.forward.timeoutMs)),
        queueMs: Math.max(1, Math.min(left, this.chain.forward.queueMs)),
      };
      const seen = this.heads?.count;
      const a = await this.rpc.call(RECEIPT_METHOD, params, times);
      const executed = a.kind === 'result' && isReceiptOf(a.result, req.hash) ? executedAnswer(a.result) : null;
      if (executed !== null) return { exit: executed, receipt: (a as { result: ReceiptCallEnd['receipt'] }).result };
      // null (not yet), an error or a fault: ask again within the wait, at the next head (at
      // once if one came while asking) or after the interval.
      const live = this.heads?.live === true;
      if (live && this.heads!.count !== seen) continue;
      await this.pause(Math.min(live ? pollMs * BACKSTOP_POLLS : pollMs, deadline - performance.now()), stop);
    }
  }

  /** After an uncertain send: accepted without a receipt (code 4) if the chain RPC knows the hash, else still uncertain. */
  private async known(hash: string, uncertain: Exit): Promise<Exit> {
    const known = await this.attempts.lookup(this.rpc, hash, performance.now() + this.chain.forward.timeoutMs);
    return known === 'known' ? pendingAnswer(hash) : uncertain;
  }

  /** Every call still waiting answers now (code 4 with its hash): the service is stopping. */
  drain(): void {
    this.draining = true;
    this.wake();
  }

  private wake(): void {
    for (const wake of this.wakers) wake();
  }

  private pause(ms: number, stop: Stop | null): Promise<void> {
    if (ms <= 0 || this.draining) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.wakers.delete(done);
        if (stop !== null) stop.wake = null;
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wakers.add(done);
      if (stop !== null) stop.wake = done;
    });
  }

  close(): Promise<void> {
    this.unsubscribe?.();
    return Promise.resolve();
  }
}
