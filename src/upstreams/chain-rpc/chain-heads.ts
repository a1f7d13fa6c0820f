/**
 * A chain's heads (`chains[].rpcWs`): the one head source of a chain on a thread, made beside
 * the chain's link in the composition root (app.ts) and subscribed to by whoever needs a new
 * block's news: the sync send's `receipt` mode (a receipt appears with a block, so a waiting call
 * asks for it when a head arrives instead of every `pollMs`) and the chain's tracker (a watcher
 * pass per head). One subscription (`eth_subscribe` "newHeads"), opened on the first
 * subscriber, kept open and re-opened after a loss (0.1 s doubling to 5 s, jittered); while it is
 * not live, the subscribers poll as without it. It carries no transaction: a lost or stalled
 * subscription only delays news, never changes an outcome. The latest head (its number, hash,
 * timestamp and when it was seen) is read from the notification, checked: a head that is not one
 * is counted and told as news all the same (the subscribers ask the chain RPC), never kept.
 */
import { WebSocket } from 'undici';
import { ignoredFrames } from '../peer-frames.js';
import { upstreamLabel } from '../upstream.js';
import type { Logger } from '../../log/log.js';
import { SUBSCRIBE_METHOD, SUBSCRIPTION_METHOD } from '../../rpc/rpc-methods.js';
import { hash32, quantity } from '../../base/rpc-values.js';

const SUBSCRIBE = `{"jsonrpc":"2.0","id":1,"method":"${SUBSCRIBE_METHOD}","params":["newHeads"]}`;
const MIN_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;
/** A head notification is a few kB; a frame beyond this is not parsed. */
const MAX_FRAME_CHARS = 1 << 20;

/** A block's head as the chain RPC announced it. */
export interface Head {
  readonly number: number;
  readonly hash: string;
  /** The block's timestamp (seconds). */
  readonly timestamp: number;
  /** When it was seen here (Date.now()). */
  readonly seenAt: number;
}

/** What a subscriber of a chain's heads reads: the one listener mechanism. */
export interface HeadSource {
  /** True from the subscription's confirmation to the connection's loss. */
  readonly live: boolean;
  /** Heads told since start: a caller compares it around a request (a head while asking: ask again). */
  readonly count: number;
  /** The latest head announced, or null (none yet). */
  head(): Head | null;
  /** Calls `fn` on every head and change of `live` (opening the subscription on the first); returns the unsubscription. */
  subscribe(fn: () => void): () => void;
}

export class ChainHeads implements HeadSource {
  count = 0;
  live = false;
  private latest: Head | null = null;
  private ws: WebSocket | null = null;
  private retryMs = MIN_RETRY_MS;
  private retry: NodeJS.Timeout | null = null;
  private opened = false;
  private closed = false;
  private readonly label: string;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly url: string,
    private readonly log: Logger,
  ) {
    this.label = upstreamLabel(url);
  }

  head(): Head | null {
    return this.latest;
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    if (!this.opened) {
      this.opened = true;
      this.connect();
    }
    return () => {
      this.listeners.delete(fn);
    };
  }

  private connect(): void {
    if (this.closed) return;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url);
    } catch (e) {
      this.log.warn({ rpcWs: this.label, err: e }, 'chain RPC head subscription: cannot connect');
      this.again();
      return;
    }
    this.ws = ws;
    ws.addEventListener('open', () => ws.send(SUBSCRIBE));
    ws.addEventListener('message', (ev) => this.message(ws, ev.data));
    // 'error' is followed by 'close'.
    ws.addEventListener('close', () => this.lost(ws));
  }

  /**
   * One frame from the chain RPC: anything at all may arrive (any JSON value, binary, huge,
   * out of order). Nothing in it may throw out of the listener (that would end the process):
   * a frame that is not a notification or our subscription's answer is counted and ignored,
   * and one that breaks the handler closes the connection (re-opened with backoff).
   */
  private message(ws: WebSocket, data: unknown): void {
    try {
      const m = parseFrame(data);
      if (m === null) {
        ignoredFrames.chain_rpc++;
        return;
      }
      if (m.method === SUBSCRIPTION_METHOD) {
        this.count++;
        // The latest announced is the chain's head, lower than the one before after a reorg or a rollback.
        const h = readHead(m);
        if (h !== null) this.latest = h;
        this.tell();
      } else if (m.id === 1 && !this.live) {
        if (typeof m.result === 'string') {
          this.live = true;
          this.retryMs = MIN_RETRY_MS;
          this.log.info({ rpcWs: this.label }, 'chain RPC head subscription live');
          this.tell();
        } else {
          // A node that does not offer newHeads: try again later, poll meanwhile.
          const e = m.error;
          const why =
            typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string'
              ? (e as { message: string }).message
              : 'no subscription id';
          this.log.warn({ rpcWs: this.label, error: why.slice(0, 200) }, 'chain RPC head subscription refused');
          this.retryMs = MAX_RETRY_MS;
          ws.close();
        }
      } else ignoredFrames.chain_rpc++;
    } catch (e) {
      this.log.warn({ rpcWs: this.label, err: e }, 'chain RPC head subscription: a frame could not be handled; reconnecting');
      try {
        ws.close();
      } catch {
        // already closing
      }
    }
  }

  private tell(): void {
    for (const fn of this.listeners) fn();
  }

  private lost(ws: WebSocket): void {
    if (this.ws !== ws) return;
    this.ws = null;
    if (this.live) {
      this.live = false;
      this.log.warn({ rpcWs: this.label }, 'chain RPC head subscription lost: polling until it is back');
      this.tell();
    }
    this.again();
  }

  private again(): void {
    if (this.closed) return;
    const ms = this.retryMs * (0.5 + Math.random() / 2);
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    this.retry = setTimeout(() => this.connect(), ms);
    this.retry.unref();
  }

  close(): void {
    this.closed = true;
    if (this.retry !== null) clearTimeout(this.retry);
    this.live = false;
    const ws = this.ws;
    this.ws = null;
    ws?.close();
  }
}

/** A newHeads notification's head (params.result: number, hash, timestamp), or null when it is not one. */
export function readHead(m: { params?: unknown }): Head | null {
  const p = m.params;
  if (typeof p !== 'object' || p === null) return null;
  const r = (p as { result?: unknown }).result;
  if (typeof r !== 'object' || r === null) return null;
  const h = r as { number?: unknown; hash?: unknown; timestamp?: unknown };
  const number = quantity(h.number);
  const hash = hash32(h.hash);
  const timestamp = quantity(h.timestamp);
  return number === null || hash === null || timestamp === null ? null : { number, hash, timestamp, seenAt: Date.now() };
}

/** A frame as a JSON-RPC object, or null for anything else (non-JSON, not an object, too large). */
export function parseFrame(data: unknown): { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown } | null {
  let text: string;
  if (typeof data === 'string') text = data;
  else if (data instanceof ArrayBuffer) text = Buffer.from(data).toString('utf8');
  else if (ArrayBuffer.isView(data)) text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
  else return null;
  if (text.length > MAX_FRAME_CHARS) return null;
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return null;
  }
  return typeof m === 'object' && m !== null && !Array.isArray(m)
    ? (m as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown })
    : null;
}
