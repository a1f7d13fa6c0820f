/**
 * The kit's WebSocket link to txgate's lane: one connection authenticated at its upgrade (the key
 * in the X-Api-Key header, never in the URL), many requests in flight, each answer matched by
 * its id whatever order they come in. Every call settles exactly once:
 * - answered: the result or the error (its `data.status` stands for the HTTP status);
 * - no connection could be made: not sent (or the upgrade's own refusal, e.g. 401);
 * - written, then the connection dropped or no answer within `timeoutMs`: uncertain (the
 *   submission may have reached a sequencer; the receipt of its hash decides).
 * A dropped connection is reopened in the background with backoff (100 ms doubling to 5 s,
 * with jitter); the server's pings keep an idle one open (answered by `ws` itself).
 *
 * An idle connection never keeps the process alive (as undici's idle sockets do not): its socket
 * is unref'd while no call is in flight and ref'd while one is, so a script that has its answers
 * ends by itself; `close()` ends the connection at once.
 */
import type { Socket } from 'node:net';
import WebSocket from 'ws';
import { type RpcAnswer, tlsFailed } from './http.js';
import { schemeMismatch, worthProbing } from './scheme-probe.js';
import { tlsCauseOf } from './tls-cause.js';
import type { LinkTimes, RpcLink } from './rpc-link.js';

interface Waiting {
  readonly resolve: (a: RpcAnswer) => void;
  readonly timer: NodeJS.Timeout;
}

const NO_HEADERS: Record<string, string | string[] | undefined> = Object.freeze({});

export class WsLink implements RpcLink {
  private sock: WebSocket | null = null;
  private opening: Promise<WebSocket | RpcAnswer> | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private seq = 0;
  private closed = false;
  private failures = 0;
  private retry: NodeJS.Timeout | null = null;
  /** The open connection's TCP socket, ref'd exactly while calls are in flight. */
  private raw: Socket | null = null;
  /** Who hears the transport's pushes (`txgate_subscription` frames: status.ts). */
  private readonly pushes = new Set<(params: unknown) => void>();
  /** Whether a connection ever opened: then the scheme is right, and a failure is not asked about (scheme-probe.ts). */
  private opened = false;

  /** A private field: util.inspect and console.log of the link never show the key. */
  readonly #apiKey: string;

  constructor(
    private readonly url: string,
    apiKey: string,
    private readonly times: LinkTimes,
  ) {
    this.#apiKey = apiKey;
  }

  async call(method: string, params: readonly unknown[]): Promise<RpcAnswer> {
    const sock = this.sock !== null && this.sock.readyState === WebSocket.OPEN ? this.sock : await this.open();
    if (!(sock instanceof WebSocket)) return sock;
    const id = ++this.seq;
    return new Promise<RpcAnswer>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve({ kind: 'failed', why: `no answer within ${this.times.timeoutMs} ms`, sent: true });
      }, this.times.timeoutMs);
      this.waiting.set(id, { resolve, timer });
      this.hold();
      sock.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }), (err) => {
        // Not flushed: the connection went while it was queued; it may or may not have left.
        if (err !== undefined && err !== null) this.settle(id, { kind: 'failed', why: `connection lost while sending: ${err.message}`, sent: true });
      });
    });
  }

  /** Hears every push of the transport (a subscription's frames); returns the unsubscription. */
  onPush(fn: (params: unknown) => void): () => void {
    this.pushes.add(fn);
    return () => this.pushes.delete(fn);
  }

  /** Opens the connection (one attempt shared by every caller): the socket, or the answer every waiting call gets. */
  private open(): Promise<WebSocket | RpcAnswer> {
    if (this.closed) return Promise.resolve({ kind: 'failed', why: 'closed', sent: false });
    this.opening ??= new Promise<WebSocket | RpcAnswer>((resolve) => {
      const sock = new WebSocket(this.url, {
        headers: { 'x-api-key': this.#apiKey },
        handshakeTimeout: this.times.connectTimeoutMs,
        perMessageDeflate: false,
        ...(this.times.ca !== undefined ? { ca: this.times.ca } : {}),
      });
      sock.once('upgrade', (res) => {
        this.raw = res.socket;
      });
      let settled = false;
      const done = (v: WebSocket | RpcAnswer) => {
        if (settled) return;
        settled = true;
        this.opening = null;
        resolve(v);
      };
      // A failure before the connection opened: a URL whose scheme the port does not speak fails
      // as a timeout or a dropped connection, so the port is asked once (until one ever opened).
      let failing = false;
      const failed = (e: unknown, a: RpcAnswer) => {
        if (failing || settled) return;
        failing = true;
        if (this.opened || !worthProbing(e)) return done(a);
        void schemeMismatch(this.url, Math.min(this.times.connectTimeoutMs, 2_000)).then((m) => done(m !== null ? tlsFailed('tls_protocol', m) : a));
      };
      sock.once('open', () => {
        this.opened = true;
        this.sock = sock;
        this.failures = 0;
        sock.on('message', (data) => this.onMessage(data.toString()));
        this.hold();
        done(sock);
      });
      // The upgrade refused (401, 403, 421, 429, 503…): every waiting call gets that refusal.
      sock.once('unexpected-response', (_req, res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => {
          done(refusalOf(res.statusCode ?? 0, text));
          sock.terminate();
        });
        res.on('error', () => done({ kind: 'failed', why: `upgrade refused with HTTP ${res.statusCode}`, sent: false }));
      });
      sock.once('error', (e) => {
        if (this.sock !== sock) {
          const tls = tlsCauseOf(e);
          if (tls !== null) done(tlsFailed(tls));
          else failed(e, { kind: 'failed', why: `cannot connect: ${e.message}`, sent: false });
        }
      });
      sock.once('close', (code, why) => {
        if (this.sock === sock) this.dropped(code, why.toString());
        else failed(null, { kind: 'failed', why: `connection closed before it opened (${code})`, sent: false });
      });
    });
    return this.opening;
  }

  private onMessage(text: string): void {
    let m: { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    try {
      m = JSON.parse(text);
    } catch {
      return; // not JSON-RPC: nothing to match it to
    }
    if (typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'txgate_subscription') {
      for (const fn of this.pushes) fn((m as { params?: unknown }).params);
      return;
    }
    if (typeof m !== 'object' || m === null || typeof m.id !== 'number') return; // id null: a frame that could not be read
    const e = m.error;
    if (typeof e === 'object' && e !== null && typeof e.code === 'number') {
      const data = e.data as { status?: unknown } | undefined;
      const status = typeof data?.status === 'number' ? data.status : 200;
      this.settle(m.id, { kind: 'error', code: e.code, message: String(e.message ?? ''), data: e.data, status, headers: NO_HEADERS });
    } else if ('result' in m) this.settle(m.id, { kind: 'result', result: m.result, status: 200, headers: NO_HEADERS });
  }

  private settle(id: number, a: RpcAnswer): void {
    const w = this.waiting.get(id);
    if (w === undefined) return;
    this.waiting.delete(id);
    clearTimeout(w.timer);
    this.hold();
    w.resolve(a);
  }

  /** The socket keeps the process alive exactly while a call waits for its answer. */
  private hold(): void {
    if (this.raw === null) return;
    if (this.waiting.size > 0 || this.closed) this.raw.ref();
    else this.raw.unref();
  }

  /** The connection dropped: every call in flight is uncertain (it was written); reopen with backoff. */
  private dropped(code: number, why: string): void {
    this.sock = null;
    this.raw = null;
    for (const id of [...this.waiting.keys()])
      this.settle(id, { kind: 'failed', why: `connection closed with calls in flight (${code}${why !== '' ? ` ${why}` : ''})`, sent: true });
    if (this.closed) return;
    const delay = Math.min(5_000, 100 * 2 ** Math.min(this.failures++, 6));
    this.retry = setTimeout(
      () => {
        this.retry = null;
        if (!this.closed && this.sock === null) void this.open();
      },
      delay / 2 + (Math.random() * delay) / 2,
    );
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry !== null) clearTimeout(this.retry);
    const sock = this.sock;
    if (sock === null || sock.readyState === WebSocket.CLOSED) return;
    this.hold(); // the closing handshake keeps the process alive until it ends (an awaited close() returns)
    await new Promise<void>((resolve) => {
      sock.once('close', () => resolve());
      sock.close(1000);
    });
  }
}

/** An upgrade refused with a JSON-RPC error body (txgate's) or without one. */
function refusalOf(status: number, text: string): RpcAnswer {
  try {
    const m = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (typeof m.error?.code === 'number')
      return { kind: 'error', code: m.error.code, message: String(m.error.message ?? ''), data: m.error.data, status, headers: NO_HEADERS };
  } catch {
    /* not JSON */
  }
  return { kind: 'failed', why: `upgrade refused with HTTP ${status}`, sent: false };
}
