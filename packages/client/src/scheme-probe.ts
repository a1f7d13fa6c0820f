/**
 * Whether a URL's scheme does not match what its port speaks: an https:// or wss:// URL on a
 * plain HTTP port (the TLS handshake never completes: the server reads the ClientHello as a
 * request head and waits), or an http:// or ws:// URL on a TLS port (the server drops the
 * connection at the first byte that is not a handshake). Neither failure names itself, so after
 * a connection that failed without an answer the kit asks the port once in the other protocol:
 * a plain `HEAD /health` whose answer starts `HTTP/`, or a TLS handshake that completes (the
 * certificate not checked: only whether TLS is spoken). A mismatch is `tls_protocol`, its
 * message naming the URL to use (docs/clients.md, the client kit). Nothing was sent: a TLS
 * server never reads plain bytes as a request, and a plain one never got past a ClientHello.
 */
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** Errors that say there is no server to ask (nothing listening, no such name, no route). */
const NO_SERVER = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Whether a failure's code (here or on its cause) leaves a server there worth asking. */
export function worthProbing(e: unknown): boolean {
  for (let err = e as { code?: unknown; cause?: unknown } | undefined, depth = 0; err != null && depth < 4; depth++) {
    if (typeof err.code === 'string' && NO_SERVER.has(err.code)) return false;
    err = err.cause as typeof err;
  }
  return true;
}

const SECURE: Record<string, string> = { 'https:': 'http:', 'wss:': 'ws:' };
const PLAIN: Record<string, string> = { 'http:': 'https:', 'ws:': 'wss:' };

/**
 * The sentence naming the mismatch and the URL to use, or null where the port speaks what the
 * URL says (or cannot be asked within `timeoutMs`).
 */
export async function schemeMismatch(url: string, timeoutMs: number): Promise<string | null> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const secure = SECURE[u.protocol];
  const plain = PLAIN[u.protocol];
  const port = Number(u.port !== '' ? u.port : secure !== undefined ? 443 : 80);
  const other = (scheme: string) => `${scheme}//${u.host}`;
  if (secure !== undefined) {
    const speaksHttp = await ask(
      timeoutMs,
      () => tcpConnect({ host, port }),
      'connect',
      (s) => {
        s.write(`HEAD /health HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n\r\n`);
      },
      (head) => head.startsWith('HTTP/'),
    );
    return speaksHttp
      ? `${u.protocol}//${u.host} is a plain HTTP port (it answered in plain HTTP, not TLS): use ${other(secure)}, or the deployment's TLS port`
      : null;
  }
  if (plain !== undefined) {
    const speaksTls = await ask(
      timeoutMs,
      () => tlsConnect({ host, port, rejectUnauthorized: false, ...(isIP(host) === 0 ? { servername: host } : {}) }),
      'secureConnect',
      null,
      null,
    );
    return speaksTls ? `${u.protocol}//${u.host} is a TLS port (it speaks TLS, not plain HTTP): use ${other(plain)}` : null;
  }
  return null;
}

/**
 * Opens a socket and waits for `ready`; then either that is the answer (`read` null), or it
 * writes with `send` and reads the first bytes for `read`. Any error, close or the bound: false.
 */
function ask(
  timeoutMs: number,
  open: () => Socket,
  ready: 'connect' | 'secureConnect',
  send: ((s: Socket) => void) | null,
  read: ((head: string) => boolean) | null,
): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let s: Socket;
    let head = '';
    const end = (v: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => end(false), timeoutMs);
    timer.unref();
    try {
      s = open();
    } catch {
      clearTimeout(timer);
      resolve(false);
      return;
    }
    s.once('error', () => end(false));
    s.once('close', () => end(read?.(head) === true));
    s.once(ready, () => {
      if (read === null) return end(true);
      send?.(s);
      s.setEncoding('latin1');
      s.on('data', (c: string) => {
        head += c;
        if (head.length >= 5) end(read(head));
      });
    });
  });
}
