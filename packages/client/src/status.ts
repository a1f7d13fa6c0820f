/**
 * The edge's transaction status, where the deployment tracks the chain (docs/tracking.md):
 * `status(hash)` asks once (`txgate_getTransactionStatus`); `watch(hash)` yields each change
 * until a final state: pushed over the WebSocket transport (a `transactionStatus` subscription, with
 * a slower status call as a backstop, which also covers a reconnect: a subscription does not
 * survive one), polled over HTTP. Every status seen is yielded once, in version order.
 */
import type { Receipt, WaitOutcome } from './submission.js';
import type { RpcAnswer } from './http.js';
import type { RpcLink } from './rpc-link.js';

export type TxStatusName = 'pending' | 'preconfirmed' | 'included' | 'reverted' | 'replaced' | 'dropped' | 'expired' | 'unknown';

/** The status object the edge answers (docs/tracking.md, "The status object"). */
export interface TxStatus {
  readonly hash: string;
  readonly status: TxStatusName;
  readonly final: boolean;
  /** `edge`: the edge accepted it for this account; `chain`: the chain RPC's receipt alone. */
  readonly source: 'edge' | 'chain';
  readonly chainId: number;
  readonly version?: number;
  readonly block: { readonly number: number; readonly hash: string; readonly index: number; readonly timestamp?: number; readonly seenAt?: number } | null;
  readonly gasUsed: number | null;
  readonly inclusionMs?: number | null;
  readonly replacedBy?: string | null;
  /** `preconfirmed` (a chain with flashblocks, docs/flashblocks.md): the block being built, the slice's index, its receipt's status where it carried one, when the edge read it. */
  readonly flashblock?: { readonly number: number; readonly index: number; readonly status: '0x1' | '0x0' | null; readonly seenAt: number } | null;
  readonly [field: string]: unknown;
}

/** What a status call came to: the status, not served (tracking off: `method_not_found`), or a failure (its answer). */
export type StatusAnswer =
  | { readonly kind: 'status'; readonly status: TxStatus }
  | { readonly kind: 'not_served' }
  | { readonly kind: 'failed'; readonly answer: RpcAnswer };

export interface WatchOptions {
  /** Stop watching after this long (ms), default 60,000. */
  readonly timeoutMs?: number;
  /** Between status calls over HTTP (and as the lane's backstop, ten times this), default 500 ms. */
  readonly pollMs?: number;
  /** Stops the watch. */
  readonly signal?: AbortSignal;
}

/** A link that can push (the WebSocket transport's): `onPush` hears every subscription frame's params. */
export interface PushLink extends RpcLink {
  onPush(fn: (params: unknown) => void): () => void;
}

const isPushLink = (l: RpcLink): l is PushLink => typeof (l as Partial<PushLink>).onPush === 'function';

export class EdgeStatus {
  constructor(private readonly link: RpcLink) {}

  async status(hash: string): Promise<StatusAnswer> {
    const a = await this.link.call('txgate_getTransactionStatus', [hash.toLowerCase()], true);
    if (a.kind === 'result' && isStatus(a.result)) return { kind: 'status', status: a.result };
    if (a.kind === 'error' && (a.data as { reason?: unknown } | undefined)?.reason === 'method_not_found') return { kind: 'not_served' };
    return { kind: 'failed', answer: a };
  }

  /** Each change of the transaction's status until a final one, the timeout or the signal. */
  async *watch(hash: string, o: WatchOptions = {}): AsyncGenerator<TxStatus> {
    const h = hash.toLowerCase();
    const deadline = performance.now() + (o.timeoutMs ?? 60_000);
    const pollMs = o.pollMs ?? 500;
    const queue: TxStatus[] = [];
    let wake: (() => void) | null = null;
    const arrived = () => {
      wake?.();
      wake = null;
    };
    let off: (() => void) | null = null;
    let sub: string | null = null;
    const link = this.link;
    if (isPushLink(link)) {
      off = link.onPush((p) => {
        const params = p as { subscription?: unknown; result?: unknown } | null;
        if (params === null || typeof params !== 'object' || params.subscription !== sub || !isStatus(params.result) || params.result.hash !== h) return;
        queue.push(params.result);
        arrived();
      });
      const a = await link.call('txgate_subscribe', ['transactionStatus', [h]], true);
      if (a.kind === 'result' && typeof a.result === 'string') sub = a.result;
    }
    const onAbort = () => arrived();
    o.signal?.addEventListener('abort', onAbort);
    let last = -1;
    let lastName = '';
    let nextPoll = 0;
    try {
      for (;;) {
        if (o.signal?.aborted === true) return;
        const now = performance.now();
        if (now >= nextPoll) {
          const s = await this.status(h);
          if (s.kind === 'status') queue.push(s.status);
          if (s.kind === 'not_served') return;
          nextPoll = performance.now() + (sub !== null ? pollMs * 10 : pollMs);
        }
        while (queue.length > 0) {
          const s = queue.shift()!;
          const v = s.version ?? -1;
          // Each change once: a status with a version seen (or, from the chain, the same state) is not new.
          if (v >= 0 ? v <= last : s.status === lastName) continue;
          last = Math.max(last, v);
          lastName = s.status;
          yield s;
          if (s.final) return;
        }
        const left = deadline - performance.now();
        if (left <= 0) return;
        await new Promise<void>((r) => {
          const t = setTimeout(r, Math.min(left, Math.max(0, nextPoll - performance.now())));
          wake = () => {
            clearTimeout(t);
            r();
          };
        });
      }
    } finally {
      o.signal?.removeEventListener('abort', onAbort);
      off?.();
      if (sub !== null) void link.call('txgate_unsubscribe', [sub], true);
    }
  }
}

/**
 * submitAndWait's wait where the edge tracks the chain: the final state as an outcome (`mined`
 * with the chain's receipt, read once, or the one the status carries; `replaced`; `dropped`; `expired`),
 * or `timeout` with the deadline.
 */
export async function finalOnEdge(edge: EdgeStatus, hash: string, deadline: number, receipt: () => Promise<Receipt | null>): Promise<WaitOutcome> {
  let last: TxStatus | null = null;
  for await (const s of edge.watch(hash, { timeoutMs: Math.max(0, deadline - performance.now()) })) last = s;
  if (last === null || !last.final) return { kind: 'timeout', hash, last: { kind: 'accepted', hash } };
  if (last.status === 'replaced') return { kind: 'replaced', hash, replacedBy: last.replacedBy ?? null };
  if (last.status === 'dropped') return { kind: 'dropped', hash };
  if (last.status === 'expired') return { kind: 'expired', hash, expiredBy: (last.expiredBy as { bound: string; head: number } | null | undefined) ?? null };
  if (last.block === null) return { kind: 'timeout', hash, last: { kind: 'accepted', hash } }; // a final state this client does not know
  const r = (await receipt()) ?? receiptOf(last);
  return { kind: 'mined', hash, receipt: r, status: last.status === 'included' ? 'success' : 'reverted' };
}

/** The receipt's fields the edge's status carries, where the chain RPC does not give the receipt itself. */
function receiptOf(s: TxStatus): Receipt {
  const b = s.block!;
  return {
    transactionHash: s.hash,
    status: s.status === 'included' ? '0x1' : '0x0',
    blockNumber: '0x' + b.number.toString(16),
    blockHash: b.hash,
    transactionIndex: '0x' + b.index.toString(16),
    gasUsed: '0x' + (s.gasUsed ?? 0).toString(16),
  };
}

function isStatus(v: unknown): v is TxStatus {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Partial<TxStatus>;
  return typeof s.hash === 'string' && typeof s.status === 'string' && typeof s.final === 'boolean';
}
