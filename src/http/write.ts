/**
 * The one way an answer is written to uWebSockets.js: corked, the status first, then
 * Content-Type, X-Request-Id and the answer's own headers (docs/design.md §7.1). A HEAD request gets the
 * headers without a body. An answer that closes its connection is written so that nothing
 * after its request is ever read as a request (see `writeAnswer`).
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { statusLine, type Header } from '../base/errors.js';

export interface WriteOptions {
  readonly reqId: string;
  readonly headers?: readonly Header[] | undefined;
  /** Close the connection with the answer (a body left unread, ambiguous framing, draining). */
  readonly close?: boolean;
  /** A HEAD request: no body unless the connection closes anyway. */
  readonly isHead?: boolean;
}

/** Told whether a closing answer was written (true) or the connection was gone first (false). */
export type Written = (written: boolean) => void;

/**
 * What uWS.js is handed on every answer, UTF-8-encoded once: given a JS string, it builds a
 * String::Utf8Value (length, then copy) on each call; given bytes it reads them in place (the
 * difference shows in bench:instr). Header names asked of every request too.
 */
const encoder = new TextEncoder();
export const ascii = (s: string): Uint8Array => encoder.encode(s);
const CONTENT_TYPE = ascii('content-type');
const JSON_CT = ascii('application/json');
const X_REQUEST_ID = ascii('x-request-id');
const STATUS = new Map<number, Uint8Array>();
/** The status line's bytes (`200 OK`), encoded once per status. */
function statusBytes(status: number): Uint8Array {
  let b = STATUS.get(status);
  if (b === undefined) STATUS.set(status, (b = ascii(statusLine(status))));
  return b;
}
/** Request header names, as getHeader wants them (lower case), encoded once. */
export const H = {
  host: ascii('host'),
  contentLength: ascii('content-length'),
  contentType: ascii('content-type'),
  apiKey: ascii('x-api-key'),
  transferEncoding: ascii('transfer-encoding'),
  ifNoneMatch: ascii('if-none-match'),
  wsVersion: ascii('sec-websocket-version'),
} as const;

/**
 * Writes a whole answer. Without `close`, at once (and `done(true)`).
 *
 * With `close`, on the next turn of the event loop: asked to close from inside its parser (a
 * request handler, a body chunk), uWS writes the answer with `Connection: close` and still
 * dispatches every request already buffered behind it on that connection, which a proxy that
 * framed the bytes differently would take for one request: two answers to one request, the
 * request-smuggling shape (RFC 9112 §6.3, §9.6). Left pending instead, the response holds the
 * connection: a request parsed behind it makes uWS close the connection at once, unanswered
 * (it denies asynchronous pipelining), and `done(false)` says so. Otherwise reading is paused,
 * the answer written, and uWS shuts the connection down and closes it right after the write.
 *
 * `gone` says whether the client left (for a request that registered onAborted itself);
 * without it, onAborted is registered here.
 */
export function writeAnswer(res: HttpResponse, status: number, body: string | Uint8Array, o: WriteOptions, done?: Written, gone?: () => boolean): void {
  if (o.close !== true) {
    writeNow(res, status, body, o, false);
    done?.(true);
    return;
  }
  let aborted = false;
  const isGone =
    gone ??
    (res.onAborted(() => {
      aborted = true;
    }),
    () => aborted);
  setImmediate(() => {
    if (isGone()) {
      done?.(false);
      return;
    }
    res.pause(); // nothing more is read from this connection
    writeNow(res, status, body, o, true);
    done?.(true);
  });
}

/**
 * The answer being written, for `corked`: cork runs its callback synchronously and nothing in it
 * writes another answer, so one function and these slots serve every answer (no closure each).
 */
const w: { res: HttpResponse | null; status: number; body: string | Uint8Array; o: WriteOptions | null; close: boolean } = {
  res: null,
  status: 0,
  body: '',
  o: null,
  close: false,
};

function writeNow(res: HttpResponse, status: number, body: string | Uint8Array, o: WriteOptions, close: boolean): void {
  w.res = res;
  w.status = status;
  w.body = body;
  w.o = o;
  w.close = close;
  try {
    res.cork(corked);
  } finally {
    w.res = null;
    w.body = '';
    w.o = null;
  }
}

function corked(): void {
  const res = w.res!;
  const o = w.o!;
  const status = w.status;
  const body = w.body;
  const close = w.close;
  res.writeStatus(statusBytes(status)).writeHeader(CONTENT_TYPE, JSON_CT).writeHeader(X_REQUEST_ID, o.reqId);
  const h = o.headers;
  if (h !== undefined)
    for (let i = 0; i < h.length; i++) {
      const header = h[i]!;
      res.writeHeader(header[0], header[1]);
    }
  // endWithoutBody only answers without arguments in this uWS build (no Content-Length then).
  if (status === 304 || (o.isHead === true && !close)) res.endWithoutBody();
  else res.end(body, close);
}

/**
 * Whether a request announces a body. One that is not read (a GET, a refusal before the body)
 * must close its connection after the answer, or its bytes would be read as the next request.
 */
export function announcesBody(req: HttpRequest): boolean {
  return req.getHeader(H.contentLength) !== '' || req.getHeader(H.transferEncoding) !== '';
}
