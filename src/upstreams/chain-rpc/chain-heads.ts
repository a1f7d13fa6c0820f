/**
 * A chain's heads: the one head source of a chain on a thread, made beside the chain's link in
 * the composition root (app.ts) wherever the chain has `rpcWs` or a reader of its latest head
 * (the conditions check of `chains[].conditional`, with `rpc`). Two feeds, one latest head:
 *
 * - the subscription (`chains[].rpcWs`, `eth_subscribe` "newHeads"), opened on the first
 *   subscriber or reader, kept open and re-opened after a loss (0.1 s doubling to 5 s,
 *   jittered). Its notifications are the news whoever subscribes is told of: the sync send's
 *   `receipt` mode (a receipt appears with a block, so a waiting call asks for it when a head
 *   arrives instead of every `pollMs`) and the chain's tracker (a watcher pass per head); while
 *   it is not live, the subscribers poll as without it;
 * - the poll (`keepLatest`): the chain RPC's latest block (`link.rpc`), asked at the shortest
 *   period any reader keeping it asks while the subscription is not live, one call at a time (a
 *   tick while one is out is skipped, never queued behind it); a reader's interest ends by its
 *   `AbortSignal`, and the last one's cancels a call out. A chain without such a reader never polls.
 *   A polled head is the latest head, never news: the subscribers' own polling is theirs.
 *
 * It carries no transaction: a lost or stalled feed only delays news or ages the head, never
 * changes an outcome. The latest head (its number, hash, timestamp and when it was seen) is read
 * checked (base/rpc-values.ts: safe-integer quantities, a 32-byte hash): a notification that is no
 * head is counted and told as news all the same (the subscribers ask the chain RPC), never kept;
 * a polled answer that is no block leaves the head as it was (and so, once old, refusing nothing).
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'undici';
import { ignoredFrames } from '../peer-frames.js';
import { type CallTimes, upstreamLabel } from '../upstream.js';
import type { ChainRpc } from './chain-rpc.js';
import type { Logger } from '../../log/log.js';
import { BLOCK_METHOD, SUBSCRIBE_METHOD, SUBSCRIPTION_METHOD } from '../../rpc/rpc-methods.js';
import { hash32, quantity } from '../../base/rpc-values.js';
import { Backoff } from '../../base/backoff.js';

const SUBSCRIBE = `{"jsonrpc":"2.0","id":1,"method":"${SUBSCRIBE_METHOD}","params":["newHeads"]}`;
/** A head notification is a few kB; a frame beyond this is not parsed. */
const MAX_FRAME_CHARS = 1 << 20;
const LATEST = '["latest",false]';
const POLL_TIMES: CallTimes = { timeoutMs: 2000, queueMs: 500 };

/** What the poll calls of the chain RPC's client: one call, cancelled by a signal. */
export type PollRpc = Pick<ChainRpc, 'call'>;

/** A block's head as the chain RPC announced it. */
export interface Head {
  readonly number: number;
  readonly hash: string;
  /** The block's timestamp (seconds). */
  readonly timestamp: number;
  /** When it was seen here (performance.now()): a notification's arrival, a poll's answer. */
  readonly seenAt: number;
}

/** What a subscriber of a chain's heads reads: the one listener mechanism. */
export interface HeadSource {
  /** True from the subscription's confirmation to the connection's loss. */
  readonly live: boolean;
  /** Heads told since start: a caller compares it around a request (a head while asking: ask again). */
  readonly count: number;
  /** The latest head, from either feed, or null (none yet). */
  head(): Head | null;
  /** Calls `fn` on every head and change of `live` (opening the subscription on the first); returns the unsubscription. */
  subscribe(fn: () => void): () => void;
}

export class ChainHeads implements HeadSource {
  count = 0;
  live = false;
  private latest: Head | null = null;
  private ws: WebSocket | null = null;
  private readonly backoff = new Backoff();
  private retry: NodeJS.Timeout | null = null;
  private opened = false;
  private closed = false;
  private readonly label: string;
  private readonly listeners = new Set<() => void>();
  /** The poll: its readers' periods, its timer and period while it has any (Infinity: none), the call out (its cancellation), a warning said. */
  private readonly readers = new Set<{ readonly ms: number }>();
  private pollTimer: NodeJS.Timeout | null = null;
  private pollMs = Infinity;
  private polling: AbortController | null = null;
  private pollWarned = false;

  constructor(
    /** `chains[].rpcWs`, or null: no subscription. */
    private readonly url: string | null,
    private readonly log: Logger,
    /** The chain RPC's client (the chain's link's), for the poll; null: no poll. */
    private readonly rpc: PollRpc | null = null,
  ) {
    this.label = url === null ? '' : upstreamLabel(url);
  }

  head(): Head | null {
    return this.latest;
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    this.open();
    return () => {
      this.listeners.delete(fn);
    };
  }

  /**
   * Keeps the latest head for a reader of it (the conditions check, docs/conditional.md) until
   * `signal` ends its interest: the subscription opened where there is one, and the poll, while
   * the subscription is not live, every `pollMs` or oftener where another reader asks oftener (a
   * shorter period takes effect at once, with a poll; the period lengthens as the readers that
   * asked it leave; the last one's leaving stops the poll and cancels a call out).
   */
  keepLatest(pollMs: number, signal: AbortSignal): void {
    if (signal.aborted || this.closed) return;
    const reader = { ms: pollMs };
    this.readers.add(reader);
    signal.addEventListener(
      'abort',
      () => {
        this.readers.delete(reader);
        this.repoll();
      },
      { once: true },
    );
    this.open();
    this.repoll();
  }

  /** The poll's period set to the shortest its readers ask (none: stopped). */
  private repoll(): void {
    if (this.rpc === null || this.closed) return;
    let ms = Infinity;
    for (const r of this.readers) ms = Math.min(ms, r.ms);
    if (ms === this.pollMs) return;
    const sooner = ms < this.pollMs;
    this.pollMs = ms;
    if (this.pollTimer !== null) clearInterval(this.pollTimer);
    this.pollTimer = null;
    if (ms === Infinity) {
      this.polling?.abort();
      return;
    }
    this.pollTimer = setInterval(() => void this.poll(), ms);
    this.pollTimer.unref();
    if (sooner) void this.poll();
  }

  private open(): void {
    if (this.opened || this.url === null) return;
    this.opened = true;
    this.connect();
  }

  /** One poll of the latest block, unless one is out or the subscription is live. */
  private async poll(): Promise<void> {
    if (this.polling !== null || this.live || this.closed) return;
    const cut = new AbortController();
    this.polling = cut;
    try {
      const a = await this.rpc!.call(BLOCK_METHOD, LATEST, POLL_TIMES, cut.signal);
      // The subscription came up meanwhile (or the source closed, or no reader is left): its heads are the latest.
      if (this.live || this.closed || cut.signal.aborted) return;
      const h = a.kind === 'result' ? headOf(a.result) : null;
      if (h !== null) {
        // A head lower than the one held (a rollback, another node behind) is taken too: the freshest word counts.
        this.latest = h;
        this.pollWarned = false;
      } else if (!this.pollWarned) {
        this.pollWarned = true;
        this.log.warn({ answer: a.kind === 'fault' ? a.why : a.kind }, 'chain RPC latest block: none read; the conditions check refuses no quote until one is');
      }
    } catch {
      // An upstream's call never throws; nothing here may end the process if one did.
    } finally {
      this.polling = null;
    }
  }

  private connect(): void {
    if (this.closed) return;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url!);
    } catch (e) {
      // The error's name only: its message may quote the URL, whose path or query can hold a key.
      this.log.warn({ rpcWs: this.label, error: e instanceof Error ? e.name : typeof e }, 'chain RPC head subscription: cannot connect');
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
          this.backoff.reset();
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
          this.backoff.longest();
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
    const ms = this.backoff.next();
    this.retry = setTimeout(() => this.connect(), ms);
    this.retry.unref();
  }

  close(): void {
    this.closed = true;
    if (this.retry !== null) clearTimeout(this.retry);
    if (this.pollTimer !== null) clearInterval(this.pollTimer);
    this.pollTimer = null;
    this.polling?.abort();
    this.live = false;
    const ws = this.ws;
    this.ws = null;
    ws?.close();
  }
}

/** A newHeads notification's head (params.result), or null when it is not one. */
export function readHead(m: { params?: unknown }): Head | null {
  const p = m.params;
  return typeof p === 'object' && p !== null ? headOf((p as { result?: unknown }).result) : null;
}

/**
 * A block or a header as a head, seen now: its number and timestamp safe-integer quantities and
 * its hash 32 bytes, or null (anything else, a number or timestamp beyond 2^53 included).
 */
export function headOf(r: unknown): Head | null {
  if (typeof r !== 'object' || r === null) return null;
  const h = r as { number?: unknown; hash?: unknown; timestamp?: unknown };
  const number = quantity(h.number);
  const hash = hash32(h.hash);
  const timestamp = quantity(h.timestamp);
  return number === null || hash === null || timestamp === null ? null : { number, hash, timestamp, seenAt: performance.now() };
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
