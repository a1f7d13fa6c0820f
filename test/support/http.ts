/** A raw HTTP client over node:http: full control of Host, chunking and aborts. */
import { request, Agent } from 'node:http';
import { connect } from 'node:net';

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  readonly json: any;
}

export interface SendOptions {
  readonly port: number;
  readonly method?: string;
  readonly path?: string;
  readonly host?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
  /** Send the body with Transfer-Encoding: chunked, in chunks of this size. */
  readonly chunked?: number;
  readonly agent?: Agent;
}

const noKeepAlive = new Agent({ keepAlive: false });

export function send(o: SendOptions): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: o.host ?? 'localhost', ...(o.headers ?? {}) };
    const body = o.body === undefined ? undefined : Buffer.isBuffer(o.body) ? o.body : Buffer.from(o.body);
    if (body !== undefined && o.chunked === undefined) headers['content-length'] = String(body.length);
    if (o.chunked !== undefined) headers['transfer-encoding'] = 'chunked';
    const req = request({ host: '127.0.0.1', port: o.port, method: o.method ?? 'POST', path: o.path ?? '/', headers, agent: o.agent ?? noKeepAlive }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined && o.chunked !== undefined) {
      for (let i = 0; i < body.length; i += o.chunked) req.write(body.subarray(i, i + o.chunked));
    } else if (body !== undefined) req.write(body);
    req.end();
  });
}

/** POST a JSON-RPC request to / with application/json. */
export function rpc(
  port: number,
  method: string,
  params: unknown[],
  opts: { id?: unknown; key?: string; host?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(opts.headers ?? {}) };
  if (opts.key !== undefined) headers['x-api-key'] = opts.key;
  return send({ port, host: opts.host ?? 'localhost', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 'id' in opts ? opts.id : 1, method, params }) });
}

/** Writes raw bytes on a fresh connection and returns everything read until the server closes (or `ms`). */
export function rawExchange(port: number, text: string, ms = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('close', () => resolve(out));
    s.on('error', reject);
    setTimeout(() => s.destroy(), ms);
  });
}

/** Like rawExchange, and says whether the server closed the connection (rather than `ms` passing). */
export function rawSession(port: number, text: string, ms = 5000): Promise<{ text: string; serverClosed: boolean }> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(text));
    let out = '';
    let timedOut = false;
    s.on('data', (d) => (out += d.toString()));
    s.on('close', () => resolve({ text: out, serverClosed: !timedOut }));
    s.on('error', reject);
    setTimeout(() => {
      timedOut = true;
      s.destroy();
    }, ms);
  });
}

/**
 * Writes `parts` on one fresh connection, `gapMs` apart (separate TCP segments), and returns
 * everything read until the server closes (or `ms`). A write after the server closed is not an
 * error here: the server may close before the last part.
 */
export function rawSegments(port: number, parts: readonly string[], gapMs: number, ms = 5000): Promise<{ text: string; serverClosed: boolean }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.setNoDelay(true);
    let out = '';
    let timedOut = false;
    let closed = false;
    s.on('data', (d) => (out += d.toString()));
    s.on('close', () => {
      closed = true;
      clearTimeout(timer);
      resolve({ text: out, serverClosed: !timedOut });
    });
    s.on('error', () => {
      /* ECONNRESET/EPIPE: a part written after the server closed */
    });
    s.on('connect', async () => {
      for (let i = 0; i < parts.length && !closed; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, gapMs));
        if (!closed) s.write(parts[i]!);
      }
    });
    const timer = setTimeout(() => {
      timedOut = true;
      s.destroy();
    }, ms);
  });
}

/** The HTTP/1.1 status lines in a raw exchange: one per answer. */
export function statusLines(raw: string): string[] {
  return raw.match(/HTTP\/1\.1 \d{3}[^\r]*/g) ?? [];
}
