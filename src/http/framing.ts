/**
 * What a request's header lines must say once, and how its body is framed: the rules a proxy in
 * front could read differently from uWebSockets.js (RFC 9112 §6.3, RFC 9110 §5.3). uWS reads the
 * first of a repeated header, so a request with two Content-Length headers, Transfer-Encoding
 * other than exactly `chunked` (or beside a Content-Length), or two Host or X-Api-Key headers
 * (a proxy taking the last would pick another chain or account) is refused before anything is
 * read, and its connection closed. A Content-Length that is not digits is one uWS closes the
 * connection over itself, unanswered. One pass over the header lines serves every rule.
 */
import type { HttpRequest } from 'uWebSockets.js';
import { REJECT, type Exit } from '../base/errors.js';
import { quote } from '../log/log-line.js';
import { H } from './write.js';

/** RFC 9110: 1*DIGIT (at most 15 here: beyond any body cap, and exact as a double). A loop: a regular expression costs more on every request. */
function validContentLength(cl: string): boolean {
  if (cl.length > 15) return false;
  for (let i = 0; i < cl.length; i++) {
    const c = cl.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

export interface FramingProblem {
  /** False when uWS drops the connection whatever is written (an invalid Content-Length). */
  readonly answerable: boolean;
  /** `bad_framing`, or `duplicate_header` for a repeated Host or X-Api-Key. */
  readonly exit: Exit;
  readonly detail: string;
}

/** A repeated Host or X-Api-Key header, or null: one pass over the header lines (GET routes, the WebSocket upgrade). */
export function duplicateHeader(req: HttpRequest): FramingProblem | null {
  let hosts = 0;
  let keys = 0;
  req.forEach((k) => {
    if (k === 'host') hosts++;
    else if (k === 'x-api-key') keys++;
  });
  return duplicates(hosts, keys);
}

function duplicates(hosts: number, keys: number): FramingProblem | null {
  if (hosts > 1) return { answerable: true, exit: REJECT.duplicate_header, detail: `${hosts} Host headers` };
  if (keys > 1) return { answerable: true, exit: REJECT.duplicate_header, detail: `${keys} X-Api-Key headers` };
  return null;
}

/**
 * How a request's body is framed (read while the request is alive): `length` (a Content-Length,
 * or none: no body), `chunked`, or the problem that makes the request ambiguous (framing, or a
 * repeated Host or X-Api-Key).
 */
export function readFraming(req: HttpRequest, cl: string): 'length' | 'chunked' | FramingProblem {
  counts.cls = counts.tes = counts.hosts = counts.keys = 0;
  req.forEach(countHeader); // synchronous: one request's counts at a time
  const { cls, tes, hosts, keys } = counts;
  if (cls > 1) return { answerable: true, exit: REJECT.bad_framing, detail: `${cls} Content-Length headers` };
  if (tes > 1) return { answerable: true, exit: REJECT.bad_framing, detail: `${tes} Transfer-Encoding headers` };
  if (tes === 1) {
    if (cls === 1) return { answerable: true, exit: REJECT.bad_framing, detail: 'both Content-Length and Transfer-Encoding' };
    const te = req.getHeader(H.transferEncoding);
    if (te.toLowerCase() !== 'chunked') return { answerable: true, exit: REJECT.bad_framing, detail: `Transfer-Encoding ${quote(te, 40)}` };
  }
  if (cl !== '' && !validContentLength(cl))
    return { answerable: false, exit: REJECT.bad_framing, detail: `invalid Content-Length ${quote(cl, 40)}: closed without an answer` };
  return duplicates(hosts, keys) ?? (tes === 1 ? 'chunked' : 'length');
}

/** The header lines counted by readFraming, and its callback: one function, no closure per request. */
const counts = { cls: 0, tes: 0, hosts: 0, keys: 0 };
function countHeader(k: string): void {
  if (k === 'content-length') counts.cls++;
  else if (k === 'transfer-encoding') counts.tes++;
  else if (k === 'host') counts.hosts++;
  else if (k === 'x-api-key') counts.keys++;
}

/** application/json, optionally with parameters (`; charset=utf-8`), case-insensitive. */
export function isJsonContentType(ct: string): boolean {
  if (ct === 'application/json') return true;
  const semi = ct.indexOf(';');
  return (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase() === 'application/json';
}
