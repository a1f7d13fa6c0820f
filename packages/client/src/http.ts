/**
 * The client kit's HTTP: one keep-alive undici Pool per origin, JSON bodies, a total timeout per
 * call, and an answer that says whether the request could have reached the server (a failure to
 * connect never did; anything after that may have).
 */
import { Pool, errors } from 'undici';
import { schemeMismatch, worthProbing } from './scheme-probe.js';
import { TLS_CAUSES, type TlsCause, tlsCauseOf } from './tls-cause.js';

export interface HttpOptions {
  /** Connection establishment bound (the spec's starting value: 3 s). */
  readonly connectTimeoutMs: number;
  /** Whole-call bound (the spec's starting value: 10 s). */
  readonly timeoutMs: number;
  /** Keep-alive connections kept per origin. */
  readonly connections?: number;
  /** PEM certificate(s) of the CA to trust for https:// (a private deployment), instead of the system's. */
  readonly ca?: string | Buffer;
}

export type HttpAnswer =
  | { readonly kind: 'response'; readonly status: number; readonly headers: Record<string, string | string[] | undefined>; readonly text: string }
  /**
   * `sent: false`: the request never left (no connection); `true`: it may have reached the
   * server. `tls`: the connection's TLS handshake failed, and why (nothing was sent).
   */
  | { readonly kind: 'failed'; readonly why: string; readonly sent: boolean; readonly tls?: TlsCause };

/** Errors raised before a request is written: the server never saw it. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

export class HttpClient {
  private readonly pool: Pool;
  /**
   * The URL's path and query, in a private field (the URL itself is not kept): a chain RPC's URL
   * often carries its provider's key there, and util.inspect or console.log of a client that
   * holds this one never shows it.
   */
  readonly #path: string;
  /** scheme://host:port, asked in the other protocol after a failure while no answer came yet (scheme-probe.ts). */
  readonly #origin: string;
  /** Whether any answer came: then the scheme is right, and a failure is not asked about. */
  private answered = false;

  constructor(
    url: string,
    private readonly opts: HttpOptions,
  ) {
    const u = new URL(url);
    this.#path = u.pathname + u.search;
    this.#origin = u.origin;
    this.pool = new Pool(u.origin, {
      connections: opts.connections ?? 8,
      pipelining: 1,
      connect: { timeout: opts.connectTimeoutMs, ...(opts.ca !== undefined ? { ca: opts.ca } : {}) },
      // txgate closes idle connections after ~10 s: let go of them first, so a request is never
      // written to a connection the server is closing (which would leave a submission uncertain).
      keepAliveTimeout: 8_000,
      keepAliveMaxTimeout: 8_000,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
  }

  async request(method: 'GET' | 'POST', path: string | null, headers: Record<string, string>, body?: string): Promise<HttpAnswer> {
    try {
      const r = await this.pool.request({
        method,
        path: path ?? this.#path,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
      const text = await r.body.text();
      this.answered = true;
      return { kind: 'response', status: r.statusCode, headers: r.headers, text };
    } catch (e) {
      const err = e as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
      const tls = tlsCauseOf(err);
      if (tls !== null) return tlsFailed(tls);
      // A URL whose scheme the port does not speak fails as a timeout or a dropped connection: ask.
      if (!this.answered && worthProbing(err)) {
        const mismatch = await schemeMismatch(this.#origin, Math.min(this.opts.connectTimeoutMs, 2_000));
        if (mismatch !== null) return tlsFailed('tls_protocol', mismatch);
      }
      const code = err.code ?? err.cause?.code ?? '';
      const sent = !(NOT_SENT.has(code) || e instanceof errors.ConnectTimeoutError);
      const why =
        err.name === 'TimeoutError' || err.name === 'AbortError'
          ? `no answer within ${this.opts.timeoutMs} ms`
          : `${code !== '' ? code + ': ' : ''}${err.message}`;
      return { kind: 'failed', why, sent };
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** A JSON-RPC 2.0 call's answer: the result, the error object, or why there is neither. */
export type RpcAnswer =
  | { readonly kind: 'result'; readonly result: unknown; readonly status: number; readonly headers: Record<string, string | string[] | undefined> }
  | {
      readonly kind: 'error';
      readonly code: number;
      readonly message: string;
      readonly data: unknown;
      readonly status: number;
      readonly headers: Record<string, string | string[] | undefined>;
    }
  | { readonly kind: 'failed'; readonly why: string; readonly sent: boolean; readonly status?: number; readonly tls?: TlsCause };

/**
 * A connection whose TLS handshake failed: never sent, its cause named (tls-cause.ts), or the
 * mismatch said exactly where the port was asked (scheme-probe.ts).
 */
export function tlsFailed(tls: TlsCause, exactly?: string): { readonly kind: 'failed'; readonly why: string; readonly sent: false; readonly tls: TlsCause } {
  return { kind: 'failed', why: `TLS failed (${tls}): ${exactly ?? TLS_CAUSES[tls]}`, sent: false, tls };
}

let ids = 0;

/** POSTs one JSON-RPC request and reads the answer whatever the HTTP status (txgate's refusals carry a JSON-RPC error). */
export async function rpcCall(http: HttpClient, method: string, params: readonly unknown[], headers: Record<string, string> = {}): Promise<RpcAnswer> {
  const a = await http.request('POST', null, { 'content-type': 'application/json', ...headers }, JSON.stringify({ jsonrpc: '2.0', id: ++ids, method, params }));
  if (a.kind === 'failed') return a;
  let msg: unknown;
  try {
    msg = JSON.parse(a.text);
  } catch {
    return { kind: 'failed', why: `HTTP ${a.status} with a body that is not JSON`, sent: true, status: a.status };
  }
  if (typeof msg === 'object' && msg !== null && !Array.isArray(msg)) {
    const m = msg as { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (typeof m.error === 'object' && m.error !== null && typeof m.error.code === 'number')
      return { kind: 'error', code: m.error.code, message: String(m.error.message ?? ''), data: m.error.data, status: a.status, headers: a.headers };
    if ('result' in m && a.status >= 200 && a.status < 300) return { kind: 'result', result: m.result, status: a.status, headers: a.headers };
  }
  return { kind: 'failed', why: `HTTP ${a.status} without a JSON-RPC result or error`, sent: true, status: a.status };
}
