/**
 * The chain RPC's new heads over WebSocket (`chains[].rpcWs`), for the sync send's `receipt`
 * mode: a receipt appears with a block, so a waiting call asks for its receipt when a head
 * arrives instead of every `pollMs`. One subscription (`eth_subscribe` "newHeads") per chain
 * and thread, kept open and re-opened after a loss (0.1 s doubling to 5 s, jittered); while it
 * is not live, the waiting calls poll as without it. It carries no transaction: a lost or stalled
 * subscription only delays a receipt, never changes an outcome.
 */
import { WebSocket } from 'undici';
import { ignoredFrames } from '../upstreams/peer-frames.js';
import { upstreamLabel } from '../upstreams/upstream.js';
import type { Logger } from '../log/log.js';
import { SUBSCRIBE_METHOD, SUBSCRIPTION_METHOD } from '../rpc/rpc-methods.js';

const SUBSCRIBE = `{"jsonrpc":"2.0","id":1,"method":"${SUBSCRIBE_METHOD}","params":["newHeads"]}`;
const MIN_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;
/** A head notification is a few kB; a frame beyond this is not parsed. */
const MAX_FRAME_CHARS = 1 << 20;

export class HeadWatch {
  /** Heads seen since start: a call compares it around its receipt request (a head while asking: ask again). */
  heads = 0;
  /** True from the subscription's confirmation to the connection's loss. */
  live = false;
  private ws: WebSocket | null = null;
  private retryMs = MIN_RETRY_MS;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly label: string;
  /** Others told as `changed` is (the tracker's watcher shares this subscription: one per chain and thread). */
  private readonly listeners = new Set<() => void>();

  /** `changed`: called on every head and whenever `live` changes (a waiting call looks again). */
  constructor(
    private readonly url: string,
    private readonly log: Logger,
    private readonly changed: () => void,
  ) {
    this.label = upstreamLabel(url);
    this.connect();
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
        this.heads++;
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

  /** Calls `fn` on every head and change of `live`, as `changed`; returns the unsubscription. */
  listen(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private tell(): void {
    this.changed();
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

/** A frame as a JSON-RPC object, or null for anything else (non-JSON, not an object, too large). */
export function parseFrame(data: unknown): { id?: unknown; method?: unknown; result?: unknown; error?: unknown } | null {
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
  return typeof m === 'object' && m !== null && !Array.isArray(m) ? (m as { id?: unknown; method?: unknown; result?: unknown; error?: unknown }) : null;
}
