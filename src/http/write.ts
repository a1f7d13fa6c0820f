/**
 * The one way an answer is written to uWebSockets.js: corked, the status first, then
 * Content-Type, X-Request-Id and the answer's own headers (STYLE.md). A HEAD request gets the
 * headers without a body; an answer that closes the connection says so to uWS.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { statusLine, type Header } from '../errors.js';

export interface WriteOptions {
  readonly reqId: string;
  readonly headers?: readonly Header[] | undefined;
  /** Close the connection after the answer (a body left unread, ambiguous framing). */
  readonly close?: boolean;
  /** A HEAD request: no body unless the connection closes anyway. */
  readonly isHead?: boolean;
}

const JSON_CT = 'application/json';

/**
 * Writes a whole answer. With `isHead`, no body: when the connection closes anyway (`close`)
 * the body may go too, since no client can misread it then.
 */
export function writeAnswer(res: HttpResponse, status: number, body: string, o: WriteOptions): void {
  const close = o.close === true;
  res.cork(() => {
    res.writeStatus(statusLine(status)).writeHeader('content-type', JSON_CT).writeHeader('x-request-id', o.reqId);
    const h = o.headers;
    if (h !== undefined)
      for (let i = 0; i < h.length; i++) {
        const header = h[i]!;
        res.writeHeader(header[0], header[1]);
      }
    // endWithoutBody only answers without arguments in this uWS build (no Content-Length then).
    if (status === 304 || (o.isHead === true && !close)) res.endWithoutBody();
    else res.end(body, close);
  });
}

/**
 * Whether a request announces a body. One that is not read (a GET, a refusal before the body)
 * must close its connection after the answer, or its bytes would be read as the next request.
 */
export function announcesBody(req: HttpRequest): boolean {
  return req.getHeader('content-length') !== '' || req.getHeader('transfer-encoding') !== '';
}
