/**
 * The GET resources outside the pipeline: /health, /ready and /tip-addresses, each with its
 * HEAD twin (the GET answer's status and headers, never a body: RFC 9110 §9.3.2; uWS routes HEAD
 * to none of the GET handlers and would send a body a keep-alive client reads as the start of
 * the next response). A GET that carries a body is answered, then closed: its body is never
 * read, so nothing of it can be taken for the next request.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { Header } from '../errors.js';
import type { RequestHead } from '../pipeline/context.js';
import type { Readiness } from './readiness.js';
import type { RequestLog } from './request-log.js';
import { announcesBody, writeAnswer } from './write.js';

/** An answer to a GET outside the pipeline (tip addresses). */
export interface GetAnswer {
  readonly status: number;
  readonly body: string;
  readonly headers?: readonly Header[];
  /** For the log line: the rejection reason, the account id. */
  readonly reason?: string;
  readonly account?: string;
}

/** GET /tip-addresses: given the raw headers, the query string and If-None-Match. */
export type TipAddressesHandler = (head: RequestHead, query: string, ifNoneMatch: string) => GetAnswer;

type Handler = (res: HttpResponse, req: HttpRequest) => void;

export interface GetRouteDeps {
  readonly readiness: Readiness;
  readonly tipAddresses: TipAddressesHandler;
  readonly requestLog: RequestLog;
  readonly nextId: () => string;
}

const HEALTH_BODY = '{"status":"ok"}';

/** The handlers, by resource and by HEAD (true) or GET (false). */
export function getRoutes(d: GetRouteDeps): { health(isHead: boolean): Handler; ready(isHead: boolean): Handler; tipAddresses(isHead: boolean): Handler } {
  return {
    health: (isHead) => (res, req) => writeAnswer(res, 200, HEALTH_BODY, { reqId: d.nextId(), isHead, close: announcesBody(req) }),
    ready: (isHead) => (res, req) => {
      const r = d.readiness.report();
      writeAnswer(res, r.ready ? 200 : 503, r.body, { reqId: d.nextId(), isHead, close: announcesBody(req) });
    },
    tipAddresses: (isHead) => (res, req) => {
      const t0 = performance.now();
      const head: RequestHead = { host: req.getHeader('host'), contentType: '', contentLength: -1, apiKey: req.getHeader('x-api-key') };
      const a = d.tipAddresses(head, req.getQuery() ?? '', req.getHeader('if-none-match'));
      const reqId = d.nextId();
      const micros = Math.round((performance.now() - t0) * 1000);
      d.requestLog.get(reqId, isHead ? 'HEAD /tip-addresses' : 'GET /tip-addresses', a.status, a.reason, a.account, micros);
      writeAnswer(res, a.status, a.body, { headers: a.headers, reqId, isHead, close: announcesBody(req) });
    },
  };
}
