/**
 * The GET resources outside the pipeline: /health, /ready and /tip-addresses, each with its
 * HEAD twin (the GET answer's status and headers, never a body: RFC 9110 §9.3.2; uWS routes HEAD
 * to none of the GET handlers and would send a body a keep-alive client reads as the start of
 * the next response). A GET that carries a body is answered, then closed (write.ts): its body is
 * never read, and nothing after it is taken for a request. While draining, every answer closes.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { Header } from '../base/errors.js';
import type { RequestHead } from '../pipeline/context.js';
import type { Readiness } from '../front/readiness.js';
import type { RequestIds } from '../front/request-ids.js';
import type { RequestLog } from '../front/request-log.js';
import { duplicateHeader } from './framing.js';
import { announcesBody, H, writeAnswer } from './write.js';

/** An answer to a GET outside the pipeline (tip addresses). */
export interface GetAnswer {
  readonly status: number;
  /** JSON text, or its bytes (a large answer built once: no string to convert per request). */
  readonly body: string | Uint8Array;
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
  readonly ids: RequestIds;
}

const HEALTH_BODY = '{"status":"ok"}';

/** The handlers, by resource and by HEAD (true) or GET (false). */
export function getRoutes(d: GetRouteDeps): { health(isHead: boolean): Handler; ready(isHead: boolean): Handler; tipAddresses(isHead: boolean): Handler } {
  return {
    health: (isHead) => (res, req) => writeAnswer(res, 200, HEALTH_BODY, { reqId: d.ids.next(), isHead, close: closes(req) }),
    ready: (isHead) => (res, req) => {
      const r = d.readiness.report();
      writeAnswer(res, r.ready ? 200 : 503, r.body, { reqId: d.ids.next(), isHead, close: closes(req) });
    },
    tipAddresses: (isHead) => (res, req) => {
      const t0 = performance.now();
      const dup = duplicateHeader(req);
      if (dup !== null) {
        const reqId = d.ids.next();
        const method = isHead ? 'HEAD /tip-addresses' : 'GET /tip-addresses';
        return writeAnswer(res, dup.exit.status, dup.exit.body('null'), { reqId, isHead, close: true }, (written) =>
          d.requestLog.get(reqId, method, written ? dup.exit.status : 0, dup.exit.reason, undefined, 0),
        );
      }
      const head: RequestHead = { host: req.getHeader(H.host), json: false, declaredBytes: -1, apiKey: req.getHeader(H.apiKey) };
      const a = d.tipAddresses(head, req.getQuery() ?? '', req.getHeader(H.ifNoneMatch));
      const reqId = d.ids.next();
      const micros = Math.round((performance.now() - t0) * 1000);
      const method = isHead ? 'HEAD /tip-addresses' : 'GET /tip-addresses';
      writeAnswer(res, a.status, a.body, { headers: a.headers, reqId, isHead, close: closes(req) }, (written) =>
        d.requestLog.get(reqId, method, written ? a.status : 0, a.reason, a.account, micros),
      );
    },
  };
  /** A body left unread, or a draining server: the answer closes its connection. */
  function closes(req: HttpRequest): boolean {
    return d.readiness.draining || announcesBody(req);
  }
}
