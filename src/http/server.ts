/**
 * The public uWebSockets.js front end: the route table, and POST / through the stage pipeline
 * (GET /tip-addresses, /health and /ready are in get-routes.ts). Other paths 404, other verbs
 * 405, always with a JSON body.
 *
 * uWS rules (docs/design.md §7.1): read what is needed from `req` synchronously; register onAborted before
 * returning; copy every onData chunk kept; every write goes inside `res.cork()` with the status
 * first (write.ts), and one writer (`respond`) guards against a second answer or writing to a
 * gone client.
 */
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { type Exit, REJECT, type Header } from '../errors.js';
import type { Logger } from '../log.js';
import { RequestLog, serverTiming } from './request-log.js';
import { uws } from '../native.js';
import { RequestContext, type BaseCtx, type FieldInitializer, type RequestHead } from '../pipeline/context.js';
import { BodyReader } from './body-reader.js';
import type { BodyBudget } from './body-budget.js';
import { isJsonContentType, readFraming } from './framing.js';
import { getRoutes, type TipAddressesHandler } from './get-routes.js';
import { STAGE_SAMPLE_MASK, type Pipeline, type PipelineHooks, type RequestObserver } from '../pipeline/pipeline.js';
import { AnswerPath, type AnswerWriter } from '../pipeline/answer-path.js';
import type { Readiness } from './readiness.js';
import { announcesBody, H, writeAnswer } from './write.js';
import { WebSocketLane, type LaneDeps } from '../ws/lane.js';

export interface ServerDeps {
  readonly log: Logger;
  readonly readiness: Readiness;
  readonly buildPipeline: (hooks: PipelineHooks) => Pipeline;
  readonly tipAddresses: TipAddressesHandler;
  readonly observer?: RequestObserver;
  readonly serverTiming?: boolean;
  /** Prefix of request ids (e.g. worker index), to keep them unique per process. */
  readonly idPrefix?: string;
  /** Busy polling beside this server thread (config `busyPoll`): told of every request. */
  readonly busyPoll?: { touch(): void };
  /** Headers a pipeline answer carries beside its own (the rate-limit headers). */
  readonly answerHeaders?: (ctx: BaseCtx, exit: Exit) => readonly Header[] | undefined;
  /** The process-wide budget for bodies being read (config `limits.maxBufferedBodyBytes`). */
  readonly bodies: BodyBudget;
  /** The WebSocket lane on `GET /` (config `websocket`, off by default): its own parts; the log, ids and drain are the server's. */
  readonly websocket?: Omit<LaneDeps, 'log' | 'requestLog' | 'guard' | 'buildPipeline' | 'nextId' | 'draining'>;
}

/** A request's context, with what the server keeps beside it: its uWS response and body reader. */
class HttpContext extends RequestContext {
  responded = false;
  timings: Float64Array | null = null;

  constructor(
    reqId: string,
    t0: number,
    head: RequestHead,
    readonly res: HttpResponse,
    readonly reader: BodyReader<HttpContext>,
    init: FieldInitializer,
  ) {
    super(reqId, t0, head, reader, init);
    reader.owner = this;
  }

  /** Called from onAborted. */
  abort(): void {
    this.aborted = true;
    this.reader.abort();
  }
}

let processSeq = 0;

/** The log detail of a refusal whose connection closed before its answer could be written. */
function unansweredDetail(detail: string | undefined): string {
  return `${detail === undefined ? '' : `${detail}: `}closed before the answer (a request followed it on the connection, or the client left)`;
}

export class PublicServer implements AnswerWriter<HttpContext> {
  readonly app: TemplatedApp;
  private listenSocket: us_listen_socket | null = null;
  private readonly pipeline: Pipeline;
  private readonly answers: AnswerPath<HttpContext>;
  private seq = 0;
  private readonly idPrefix: string;
  private readonly log: Logger;
  private readonly requestLog: RequestLog;
  /** Every request is timed per stage with Server-Timing on; else 1 in 64 feeds the metrics. */
  private readonly timeMask: number;
  private readonly busy: { touch(): void } | undefined;
  private readonly bodies: BodyBudget;
  /** The WebSocket lane, where the deployment turned it on. */
  readonly lane: WebSocketLane | null;

  constructor(private readonly deps: ServerDeps) {
    this.log = deps.log;
    this.requestLog = new RequestLog(deps.log);
    this.busy = deps.busyPoll;
    this.bodies = deps.bodies;
    this.timeMask = deps.serverTiming === true ? 0 : deps.observer?.stage !== undefined ? STAGE_SAMPLE_MASK : -1;
    this.idPrefix = (deps.idPrefix ?? `${process.pid.toString(36)}${(processSeq++).toString(36)}`) + '-';
    this.answers = new AnswerPath<HttpContext>(this, {
      log: this.requestLog,
      via: 'POST /',
      ...(deps.observer !== undefined ? { observer: deps.observer } : {}),
    });
    const hooks: PipelineHooks = { exit: this.answers.exit };
    if (deps.observer?.stage !== undefined || deps.serverTiming === true) {
      const obs = deps.observer;
      const timing = deps.serverTiming === true;
      hooks.stage = (ctx, i, ms) => {
        obs?.stage?.(this.pipeline.names[i]!, ms);
        if (timing) ((ctx as HttpContext).timings ??= new Float64Array(this.pipeline.names.length))[i] = ms;
      };
    }
    this.pipeline = deps.buildPipeline(hooks);
    deps.observer?.stages?.(this.pipeline.names);
    this.lane =
      deps.websocket === undefined
        ? null
        : new WebSocketLane({
            ...deps.websocket,
            log: deps.log,
            requestLog: this.requestLog,
            guard: (h) => this.guard(h),
            buildPipeline: deps.buildPipeline,
            nextId: () => this.nextId(),
            draining: () => deps.readiness.draining,
          });
    this.app = this.routes(uws().App());
  }

  private routes(app: TemplatedApp): TemplatedApp {
    const notAllowed = this.guard((res, req) => this.plain(res, req, REJECT.method_not_allowed));
    const get = getRoutes({ readiness: this.deps.readiness, tipAddresses: this.deps.tipAddresses, requestLog: this.requestLog, nextId: () => this.nextId() });
    // GET / with Upgrade: websocket, where the lane is on; any other GET / falls through to 405.
    this.lane?.register(app);
    return app
      .post(
        '/',
        this.guard((res, req) => this.onPost(res, req)),
      )
      .any('/', notAllowed)
      .get('/health', this.guard(get.health(false)))
      .head('/health', this.guard(get.health(true)))
      .any('/health', notAllowed)
      .get('/ready', this.guard(get.ready(false)))
      .head('/ready', this.guard(get.ready(true)))
      .any('/ready', notAllowed)
      .get('/tip-addresses', this.guard(get.tipAddresses(false)))
      .head('/tip-addresses', this.guard(get.tipAddresses(true)))
      .any('/tip-addresses', notAllowed)
      .any(
        '/*',
        this.guard((res, req) => this.plain(res, req, REJECT.not_found)),
      );
  }

  /**
   * uWS aborts the whole process if a handler returns without answering or registering
   * onAborted, which a thrown exception would cause: every handler answers 500 instead.
   */
  private guard(h: (res: HttpResponse, req: HttpRequest) => void): (res: HttpResponse, req: HttpRequest) => void {
    return (res, req) => {
      try {
        h(res, req);
      } catch (e) {
        this.log.error({ err: e }, 'handler failed');
        try {
          writeAnswer(res, 500, REJECT.internal_error.body('null'), { close: true, reqId: this.nextId() });
        } catch {
          /* already answered: nothing more can be done for this request */
        }
      }
    };
  }

  /**
   * Answers a request outside the pipeline; closes the connection if a body is pending (or when
   * draining), logged once it is known whether the answer was written.
   */
  private plain(res: HttpResponse, req: HttpRequest, exit: Exit, detail?: string, close = false): void {
    const reqId = this.nextId();
    const method = req.getMethod();
    const path = req.getUrl();
    writeAnswer(
      res,
      exit.status,
      exit.body('null'),
      { close: close || this.deps.readiness.draining || announcesBody(req), reqId, isHead: method === 'head' },
      (written) =>
        this.requestLog.refused(reqId, method.toUpperCase(), path, written ? exit.status : 0, exit.reason, written ? detail : unansweredDetail(detail)),
    );
  }

  /** The pipeline threw outside a stage (in an exit hook): log it, and answer if nothing was. */
  private readonly failed = (ctx: HttpContext, e: unknown): void => {
    this.log.error({ err: e, reqId: ctx.reqId }, 'request failed outside a stage');
    try {
      this.write(ctx, REJECT.internal_error); // no-op if already answered or gone
    } catch {
      /* the connection is gone */
    }
  };

  private nextId(): string {
    return this.idPrefix + (++this.seq).toString(36);
  }

  private onPost(res: HttpResponse, req: HttpRequest): void {
    this.busy?.touch();
    const cl = req.getHeader(H.contentLength);
    const framing = readFraming(req, cl);
    if (typeof framing === 'object') {
      if (framing.answerable) this.plain(res, req, framing.exit, framing.detail, true);
      else {
        // uWS closes such a connection itself, dropping any answer: say exactly that, and close.
        this.requestLog.refused(this.nextId(), 'POST', req.getUrl(), 0, framing.exit.reason, framing.detail);
        res.close();
      }
      return;
    }
    const contentLength = cl === '' ? -1 : Number(cl);
    const head: RequestHead = {
      host: req.getHeader(H.host),
      json: isJsonContentType(req.getHeader(H.contentType)),
      declaredBytes: contentLength,
      apiKey: req.getHeader(H.apiKey),
    };
    const hasBody = contentLength > 0 || framing === 'chunked';
    const reqId = this.nextId();
    const ctx = new HttpContext(
      reqId,
      performance.now(),
      head,
      res,
      new BodyReader<HttpContext>(res, hasBody, contentLength, this.bodies, this.failed),
      this.pipeline.initFields,
    );
    if (this.timeMask >= 0 && (this.seq & this.timeMask) === 0) ctx.timed = true;
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
    let headers = exit.headers;
    const extra = this.deps.answerHeaders?.(ctx, exit);
    if (extra !== undefined) headers = headers === undefined ? extra : [...headers, ...extra];
    if (ctx.timings !== null) headers = [...(headers ?? []), ['server-timing', serverTiming(ctx.timings, this.pipeline.names)]];
    // A body left unread (early exit before or during reading) would be parsed as the next
    // request: close the connection instead of draining an unbounded body. Draining, every
    // answer closes, so a keep-alive client moves to another edge.
    const o = { headers, close: !ctx.reader.done || this.deps.readiness.draining, reqId: ctx.reqId };
    if (!o.close) {
      writeAnswer(ctx.res, exit.status, exit.body(ctx.idJson), o);
      return true;
    }
    return new Promise<boolean>((done) => writeAnswer(ctx.res, exit.status, exit.body(ctx.idJson), o, done, () => ctx.aborted));
  }

  /** The pipeline's stage names, in order. */
  get stageNames(): readonly string[] {
    return this.pipeline.names;
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (sock) => {
        if (sock === false) return reject(new Error(`cannot listen on ${host}:${port}`));
        this.listenSocket = sock;
        this.deps.readiness.listening = true;
        resolve(uws().us_socket_local_port(sock as never));
      });
    });
  }

  /**
   * Graceful stop: /ready turns 503, the listen socket closes (no new connections), requests in
   * flight finish within `graceMs`, then every connection is closed.
   */
  async drain(graceMs: number): Promise<{ unfinished: number }> {
    this.deps.readiness.draining = true;
    if (this.listenSocket !== null) {
      uws().us_listen_socket_close(this.listenSocket);
      this.listenSocket = null;
    }
    const [, lane] = await Promise.all([this.answers.settled(graceMs), this.lane?.drain(graceMs)]);
    const unfinished = this.answers.pending + (lane?.unfinished ?? 0);
    (this.app as unknown as { close(): void }).close();
    return { unfinished };
  }
}
