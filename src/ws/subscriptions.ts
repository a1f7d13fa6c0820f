/**
 * `transactionStatus` subscriptions on the WebSocket transport, for chains that track their accepted
 * transactions (`chains[].track`; docs/tracking.md). `txgate_subscribe` with
 * `["transactionStatus"]` pushes every change of the connection's account's transactions, with
 * `["transactionStatus", ["0x…", …]]` those of the hashes given (at most MAX_HASHES, still only
 * the account's own); each change is a frame
 * `{"jsonrpc":"2.0","method":"txgate_subscription","params":{"subscription":id,"result":status}}`,
 * in the order they happen, `result` the object `txgate_getTransactionStatus` answers.
 * `txgate_unsubscribe` with `[id]` stops one (`true`, or `false` for an id not open). A
 * subscription lives as long as its connection: nothing survives a reconnect (ask the status
 * of what you need again). At most `track.maxSubscriptions` per connection (beyond:
 * `invalid_params`).
 *
 * These two methods are the transport's own (they need the connection): a frame is looked at here only
 * on a connection whose chain tracks, and only when it names one of them; every other frame goes
 * to the pipeline untouched.
 */
import { Exit, reject } from '../base/errors.js';

import { STATUS_SUBSCRIBE_METHOD as SUBSCRIBE, STATUS_UNSUBSCRIBE_METHOD as UNSUBSCRIBE } from '../rpc/rpc-methods.js';
/** Hashes one subscription may name. */
const MAX_HASHES = 1024;
const TX_HASH = /^0[xX][0-9a-fA-F]{64}$/;

/** Told of every change of a tracked transaction: whose and which, and its status object (JSON text). */
export type FeedListener = (change: { readonly account: string; readonly hash: string }, status: string) => void;

/** What the transport needs of a chain's tracker (the tracker, or on another thread its seam: track/seam/remote.ts). */
export interface StatusFeed {
  listen(fn: FeedListener): () => void;
}

/** A connection's subscriptions. */
export class Subscriptions {
  private readonly open = new Map<string, () => void>();
  private next = 0;

  constructor(
    private readonly feed: StatusFeed,
    private readonly account: string,
    private readonly max: number,
    /** Sends one push frame; false when the connection could not take it (it is then closed by the transport). */
    private readonly push: (frame: string) => void,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /**
   * The answer to a frame that names one of the two methods (null: not ours, the pipeline's).
   * Answers are (status, body tail) pairs as any Exit.
   */
  answer(text: string): { readonly exit: Exit; readonly idJson: string; readonly method: string } | null {
    if (!text.includes('"txgate_subscribe"') && !text.includes('"txgate_unsubscribe"')) return null;
    let m: unknown;
    try {
      m = JSON.parse(text);
    } catch {
      return null; // the pipeline answers a frame that is not JSON
    }
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return null;
    const { method, params, id } = m as { method?: unknown; params?: unknown; id?: unknown };
    if (method !== SUBSCRIBE && method !== UNSUBSCRIBE) return null;
    if (!(typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) || id === null || id === undefined)) return null;
    const idJson = id === undefined ? 'null' : JSON.stringify(id);
    const p = Array.isArray(params) ? params : [];
    return { exit: method === SUBSCRIBE ? this.subscribe(p) : this.unsubscribe(p), idJson, method };
  }

  private subscribe(p: readonly unknown[]): Exit {
    if (p[0] !== 'transactionStatus' || p.length > 2)
      return reject('invalid_params', 'Invalid params: txgate_subscribe takes "transactionStatus", then optionally an array of transaction hashes');
    let hashes: Set<string> | null = null;
    if (p.length === 2) {
      const h = p[1];
      if (!Array.isArray(h) || h.length === 0 || h.length > MAX_HASHES || !h.every((x) => typeof x === 'string' && TX_HASH.test(x)))
        return reject('invalid_params', `Invalid params: the hashes must be 1 to ${MAX_HASHES} transaction hashes (0x and 64 hex digits)`);
      hashes = new Set(h.map((x: string) => '0x' + x.slice(2).toLowerCase()));
    }
    if (this.open.size >= this.max)
      return reject('invalid_params', `Invalid params: at most ${this.max} transactionStatus subscriptions per connection; unsubscribe one first`);
    const id = '0x' + (++this.next).toString(16);
    const idJson = JSON.stringify(id);
    const account = this.account;
    const off = this.feed.listen((e, status) => {
      if (e.account !== account || (hashes !== null && !hashes.has(e.hash))) return;
      this.push(`{"jsonrpc":"2.0","method":"txgate_subscription","params":{"subscription":${idJson},"result":${status}}}`);
    });
    this.open.set(id, off);
    return resultJson(idJson);
  }

  private unsubscribe(p: readonly unknown[]): Exit {
    if (p.length !== 1 || typeof p[0] !== 'string') return reject('invalid_params', 'Invalid params: txgate_unsubscribe takes one subscription id');
    const off = this.open.get(p[0]);
    if (off === undefined) return resultJson('false');
    off();
    this.open.delete(p[0]);
    return resultJson('true');
  }

  /** The connection closed: every subscription ends. */
  close(): void {
    for (const off of this.open.values()) off();
    this.open.clear();
  }
}

function resultJson(json: string): Exit {
  return new Exit(200, 'ok', `,"result":${json}}`);
}
