/**
 * Message framing a proxy in front could read differently from uWebSockets.js (RFC 9112 §6.3):
 * uWS reads the first Content-Length and ignores transfer codings, so a request with two
 * Content-Length headers, or Transfer-Encoding other than exactly `chunked` (or beside a
 * Content-Length), is refused before anything is read, and its connection closed. A
 * Content-Length that is not digits is one uWS closes the connection over itself, unanswered.
 */
import type { HttpRequest } from 'uWebSockets.js';
import { quote } from '../log-line.js';
import { H } from './write.js';

/** RFC 9110: 1*DIGIT (at most 15 here: beyond any body cap, and exact as a double). */
const CONTENT_LENGTH = /^\d{1,15}$/;

export interface FramingProblem {
  /** False when uWS drops the connection whatever is written (an invalid Content-Length). */
  readonly answerable: boolean;
  readonly detail: string;
}

/**
 * How a request's body is framed (read while the request is alive): `length` (a Content-Length,
 * or none: no body), `chunked`, or the problem that makes it ambiguous.
 */
export function readFraming(req: HttpRequest, cl: string): 'length' | 'chunked' | FramingProblem {
  let cls = 0;
  let tes = 0;
  req.forEach((k) => {
    if (k === 'content-length') cls++;
    else if (k === 'transfer-encoding') tes++;
  });
  if (cls > 1) return { answerable: true, detail: `${cls} Content-Length headers` };
  if (tes > 1) return { answerable: true, detail: `${tes} Transfer-Encoding headers` };
  if (tes === 1) {
    if (cls === 1) return { answerable: true, detail: 'both Content-Length and Transfer-Encoding' };
    const te = req.getHeader(H.transferEncoding);
    return te.toLowerCase() === 'chunked' ? 'chunked' : { answerable: true, detail: `Transfer-Encoding ${quote(te, 40)}` };
  }
  if (cl !== '' && !CONTENT_LENGTH.test(cl)) return { answerable: false, detail: `invalid Content-Length ${quote(cl, 40)}: closed without an answer` };
  return 'length';
}

/** application/json, optionally with parameters (`; charset=utf-8`), case-insensitive. */
export function isJsonContentType(ct: string): boolean {
  if (ct === 'application/json') return true;
  const semi = ct.indexOf(';');
  return (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase() === 'application/json';
}
