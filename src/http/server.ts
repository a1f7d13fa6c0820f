/**
 * The HTTP front end (front/front-end.ts) on the public uWebSockets.js port: its route table, and
 * POST / through the stage pipeline (GET /tip-addresses, /health and /ready are in
 * get-routes.ts). Other paths 404, other verbs 405, always with a JSON body.
 *
 * uWS rules (docs/design.md §7.1): read what is needed from `req` synchronously; register onAborted before
 * returning; copy every onData chunk kept; every write goes inside `res.cork()` with the status
 * first (write.ts), and one writer (`respond`) guards against a second answer or writing to a
 * gone client.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { type Exit, REJECT, reject, FAIL } from '../base/errors.js';
import type { UwsFrontEnd, UwsPortParts } from './port.js';
import type { RequestIds } from '../front/request-ids.js';
import { BodyReadingContext, type BodyReading } from './body-reader.js';
import type { BodyBudget } from './body-budget.js';
import { isJsonContentType, readFraming } from './framing.js';
import { getRoutes, type TipAddressesHandler } from './get-routes.js';
import type { Pipeline, PipelineHooks, RequestObserver } from '../pipeline/pipeline.js';
import { AnswerPath, type AnswerWriter } from '../pipeline/answer-path.js';
import { announcesBody, H, writeAnswer } from './write.js';

export interface HttpDeps {
  readonly port: UwsPortParts;
  readonly buildPipeline: (hooks: PipelineHooks) => Pipeline;
  readonly tipAddresses: TipAddressesHandler;
  readonly observer?: RequestObserver;
  /** Every request timed, its stages' times in a Server-Timing header (`profiling.serverTiming`). */
  readonly serverTiming?: boolean;
  /** Told of every request (the thread's activity: busy polling, the rehearsal's idle look; src/rehearsal/activity.ts). */
  readonly activity?: { touch(): void };
  /** The process-wide budget for bodies being read (config `limits.maxBufferedBodyBytes`). */
  readonly bodies: BodyBudget;
}

/** One HTTP request: its pipeline context, which reads its own body (body-reader.ts). */
class HttpContext extends BodyReadingContext {
  responded = false;

  /** Called from onAborted. */
  abort(): void {
    this.aborted = true;
    this.abortRead();
  }
}

/**
 * A WebSocket upgrade where the transport is off (its route is registered only with
 * `websocket.enabled`): still 405 method_not_allowed, naming the setting and the way meanwhile.
 */
const WEBSOCKET_OFF = reject(
  'method_not_allowed',
  'The WebSocket transport is off on this gate (websocket.enabled is false): use an http:// or https:// URL, or ask the operator to set websocket.enabled',
  { setting: 'websocket.enabled' },
);

/** Whether a request asks for a WebSocket upgrade (the header's value is case-insensitive, RFC 6455 §4.2.1). */
const asksWebSocket = (req: HttpRequest): boolean => /websocket/i.test(req.getHeader('upgrade'));

/** The log detail of a refusal whose connection closed before its answer could be written. */
function unansweredDetail(detail: string | undefined): string {
  return `${detail === undefined ? '' : `${detail}: `}closed before the answer (a request followed it on the connection, or the client left)`;
}

export class HttpFrontEnd implements UwsFrontEnd, AnswerWriter<HttpContext> {
  readonly transport = 'http';
  private readonly pipeline: Pipeline;
  private readonly answers: AnswerPath<HttpContext>;
  private readonly ids: RequestIds;
  private readonly port: UwsPortParts;
  private readonly activity: { touch(): void } | undefined;
  /** What every request's body reading shares: the budget, and what a throw from continuing after it does. */
  private readonly reading: BodyReading;

  constructor(private readonly deps: HttpDeps) {
    this.port = deps.port;
    this.ids = deps.port.ids;
    this.activity = deps.activity;
    this.reading = { budget: deps.bodies };
    this.answers = new AnswerPath<HttpContext>(this, {
      log: deps.port.requestLog,
      via: 'POST /',
      ...(deps.observer !== undefined ? { observer: deps.observer } : {}),
    });
    const hooks: PipelineHooks = {
      exit: this.answers.exit,
      failed: (ctx, e) => this.failed(ctx as HttpContext, e),
      observer: deps.observer,
      timeEvery: deps.serverTiming,
    };
    this.pipeline = deps.buildPipeline(hooks);
  }

  /** Its routes: POST /, the GET resources, 404 and 405 for the rest (a WebSocket upgrade on `GET /` goes to its own front end first). */
  register(app: TemplatedApp): void {
    const guard = this.port.guard;
    const notAllowed = guard((res, req) => this.plain(res, req, REJECT.method_not_allowed));
    const get = getRoutes({ readiness: this.port.readiness, tipAddresses: this.deps.tipAddresses, requestLog: this.port.requestLog, ids: this.ids });
    app
      .post(
        '/',
        guard((res, req) => this.onPost(res, req)),
      )
      .any(
        '/',
        guard((res, req) =>
          req.getMethod() === 'get' && asksWebSocket(req)
            ? this.plain(res, req, WEBSOCKET_OFF, 'websocket upgrade: the transport is off')
            : this.plain(res, req, REJECT.method_not_allowed),
        ),
      )
      .get('/health', guard(get.health(false)))
      .head('/health', guard(get.health(true)))
      .any('/health', notAllowed)
      .get('/ready', guard(get.ready(false)))
      .head('/ready', guard(get.ready(true)))
      .any('/ready', notAllowed)
      .get('/tip-addresses', guard(get.tipAddresses(false)))
      .head('/tip-addresses', guard(get.tipAddresses(true)))
      .any('/tip-addresses', notAllowed)
      .any(
        '/*',
        guard((res, req) => this.plain(res, req, REJECT.not_found)),
      );
  }

  /**
   * Answers a request outside the pipeline; closes the connection if a body is pending (or when
   * draining), logged once it is known whether the answer was written.
   */
  private plain(res: HttpResponse, req: HttpRequest, exit: Exit, detail?: string, close = false): void {
    const reqId = this.ids.next();
    const method = req.getMethod();
    const path = req.getUrl();
    writeAnswer(
      res,
      exit.status,
      exit.body('null'),
      { close: close || this.port.readiness.draining || announcesBody(req), reqId, isHead: method === 'head' },
      (written) =>
        this.port.requestLog.refused(reqId, method.toUpperCase(), path, written ? exit.status : 0, exit.reason, written ? detail : unansweredDetail(detail)),
    );
  }

  /** The pipeline threw outside a stage (in its answer path, after a wait): log it, and answer if nothing was. */
  private readonly failed = (ctx: HttpContext, e: unknown): void => {
    this.port.log.error({ err: e, reqId: ctx.reqId }, 'request failed outside a stage');
    try {
      this.write(ctx, FAIL.internal_error); // no-op if already answered or gone
    } catch {
      /* the connection is gone */
    }
  };

  private onPost(res: HttpResponse, req: HttpRequest): void {
    this.activity?.touch();
    const cl = req.getHeader(H.contentLength);
    const framing = readFraming(req, cl);
    if (typeof framing === 'object') {
      if (framing.answerable) this.plain(res, req, framing.exit, framing.detail, true);
      else {
        // uWS closes such a connection itself, dropping any answer: say exactly that, and close.
        this.port.requestLog.refused(this.ids.next(), 'POST', req.getUrl(), 0, framing.exit.reason, framing.detail);
        res.close();
      }
      return;
    }
    const contentLength = cl === '' ? -1 : Number(cl);
    const hasBody = contentLength > 0 || framing === 'chunked';
    const reqId = this.ids.next();
    const ctx = new HttpContext(
      reqId,
      performance.now(),
      req.getHeader(H.host),
      isJsonContentType(req.getHeader(H.contentType)),
      contentLength,
      req.getHeader(H.apiKey),
      this.pipeline.initFields,
      res,
      hasBody,
      this.reading,
    );
    res.onAborted(() => ctx.abort());
    this.answers.begin();
    this.pipeline.run(ctx);
  }

  /**
   * HTTP's answer writer (AnswerWriter), the one writer for pipeline answers: true when written
   * at once; an answer that closes its connection is known written only later (write.ts).
   */
  write(ctx: HttpContext, exit: Exit): boolean | Promise<boolean> {
    if (ctx.responded || ctx.aborted) return true;
    ctx.responded = true;
    // The Exit's own, the stages' (the quota) and Server-Timing: the pipeline's to say, HTTP's to write.
    const headers = this.pipeline.headers(ctx, exit);
    // A body left unread (early exit before or during reading) would be parsed as the next
    // request: close the connection instead of draining an unbounded body. Draining, every
    // answer closes, so a keep-alive client moves to another edge.
    if (ctx.done && !this.port.readiness.draining) {
      // Written at once. A young object per answer: one kept for every answer is old, and storing
      // each answer's strings into it paid the old-to-young write barrier (measured).
      writeAnswer(ctx.res, exit.status, exit.body(ctx.idJson), { reqId: ctx.reqId, headers, close: false });
      return true;
    }
    const o = { headers, close: true, reqId: ctx.reqId };
    return new Promise<boolean>((done) => writeAnswer(ctx.res, exit.status, exit.body(ctx.idJson), o, done, () => ctx.aborted));
  }

  /** The pipeline's stage names, in order. */
  get stageNames(): readonly string[] {
    return this.pipeline.names;
  }

  /** Requests in flight answered within `graceMs` (the port closed its listen socket; /ready is 503, and every answer closes). */
  async drain(graceMs: number): Promise<{ unfinished: number }> {
    await this.answers.settled(graceMs);
    return { unfinished: this.answers.pending };
  }
}
