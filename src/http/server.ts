/**
 * The public uWebSockets.js front end: POST / through the stage pipeline, GET /tip-addresses,
 * GET /health, GET /ready. Other paths 404, other verbs 405, always with a JSON body.
 *
 * uWS rules (STYLE.md): read what is needed from `req` synchronously; register onAborted before
 * returning; copy every onData chunk kept; every write goes inside `res.cork()` with the status
 * first, and one writer (`respond`) guards against a second answer or writing to a gone client.
 */
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { type Exit, REJECT, statusLine, type Header } from '../errors.js';
import type { Logger } from '../log.js';
import { RequestLog, serverTiming } from './request-log.js';
import { uws } from '../native.js';
import { RequestContext, type BaseCtx, type RequestHead } from '../pipeline/context.js';
import { BodyReader } from './body-reader.js';
import { framingProblem } from './framing.js';
import { STAGE_NAMES, STAGE_SAMPLE_MASK, type Pipeline, type PipelineHooks, type StageName } from '../pipeline/pipeline.js';
import type { Readiness } from './readiness.js';

/** Answers for GET endpoints outside the pipeline (tip addresses). */
export interface GetAnswer {
  readonly status: number;
  readonly body: string;
  readonly headers?: readonly Header[];
  /** For the log line: the rejection reason, the account id. */
  readonly reason?: string;
  readonly account?: string;
}

export interface RequestObserver {
  /** Once per answered (or abandoned) request, after the response was written. */
  request(ctx: BaseCtx, exit: Exit, stage: StageName, micros: number): void;
  stage?(stage: number, ms: number): void;
}

export interface ServerDeps {
  readonly log: Logger;
  readonly readiness: Readiness;
  readonly buildPipeline: (hooks: PipelineHooks) => Pipeline;
  /** GET /tip-addresses: given the raw headers, the query string and If-None-Match. */
  readonly tipAddresses: (head: RequestHead, query: string, ifNoneMatch: string) => GetAnswer;
  readonly observer?: RequestObserver;
  readonly serverTiming?: boolean;
  /** Prefix of request ids (e.g. worker index), to keep them unique per process. */
  readonly idPrefix?: string;
  /** Busy polling beside this server thread (config `busyPoll`): told of every request. */
  readonly busyPoll?: { touch(): void };
  /** Headers every pipeline answer of this request carries beside its own (the rate-limit headers). */
  readonly answerHeaders?: (ctx: BaseCtx) => readonly Header[] | undefined;
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
  ) {
    super(reqId, t0, head, reader);
    reader.owner = this;
  }

  /** Called from onAborted. */
  abort(): void {
    this.aborted = true;
    this.reader.abort();
  }
}

interface WriteOptions {
  readonly reqId: string;
  readonly headers?: readonly Header[];
  /** Close the connection after the answer (a body left unread, ambiguous framing). */
  readonly close?: boolean;
  /** A HEAD request: no body unless the connection closes anyway. */
  readonly isHead?: boolean;
}

const JSON_CT = 'application/json';
const HEALTH_BODY = '{"status":"ok"}';

let processSeq = 0;

export class PublicServer {
  readonly app: TemplatedApp;
  private listenSocket: us_listen_socket | null = null;
  private readonly pipeline: Pipeline;
  private inFlight = 0;
  private seq = 0;
  private readonly idPrefix: string;
  private drained: (() => void) | null = null;
  private readonly log: Logger;
  private readonly requestLog: RequestLog;
  /** Every request is timed per stage with Server-Timing on; else 1 in 64 feeds the metrics. */
  private readonly timeMask: number;
  private readonly busy: { touch(): void } | undefined;

  constructor(private readonly deps: ServerDeps) {
    this.log = deps.log;
    this.requestLog = new RequestLog(deps.log);
    this.busy = deps.busyPoll;
    this.timeMask = deps.serverTiming === true ? 0 : deps.observer?.stage !== undefined ? STAGE_SAMPLE_MASK : -1;
    this.idPrefix = (deps.idPrefix ?? `${process.pid.toString(36)}${(processSeq++).toString(36)}`) + '-';
    const hooks: PipelineHooks = { exit: (ctx, exit, stage, err) => this.onExit(ctx as HttpContext, exit, stage, err) };
    if (deps.observer?.stage !== undefined || deps.serverTiming === true) {
      const obs = deps.observer;
      const timing = deps.serverTiming === true;
      hooks.stage = (ctx, i, ms) => {
        obs?.stage?.(i, ms);
        if (timing) ((ctx as HttpContext).timings ??= new Float64Array(STAGE_NAMES.length))[i] = ms;
      };
    }
    this.pipeline = deps.buildPipeline(hooks);
    this.app = this.routes(uws().App());
  }

  private routes(app: TemplatedApp): TemplatedApp {
    const notAllowed = this.guard((res, req) => this.plain(res, req, REJECT.method_not_allowed));
    // HEAD on a GET resource: the GET answer's status and headers, never a body (RFC 9110
    // §9.3.2). uWS routes HEAD to none of the GET handlers and would send a body a keep-alive
    // client reads as the start of the next response.
    // A GET that carries a body is answered, then closed: its body is never read, so nothing
    // of it can be taken for the next request.
    const health = (isHead: boolean) => this.guard((res, req) => this.write(res, 200, HEALTH_BODY, { reqId: this.nextId(), isHead, close: hasBody(req) }));
    const ready = (isHead: boolean) =>
      this.guard((res, req) => {
        const r = this.deps.readiness.report();
        this.write(res, r.ready ? 200 : 503, r.body, { reqId: this.nextId(), isHead, close: hasBody(req) });
      });
    return app
      .post(
        '/',
        this.guard((res, req) => this.onPost(res, req)),
      )
      .any('/', notAllowed)
      .get('/health', health(false))
      .head('/health', health(true))
      .any('/health', notAllowed)
      .get('/ready', ready(false))
      .head('/ready', ready(true))
      .any('/ready', notAllowed)
      .get(
        '/tip-addresses',
        this.guard((res, req) => this.onTipAddresses(res, req, false)),
      )
      .head(
        '/tip-addresses',
        this.guard((res, req) => this.onTipAddresses(res, req, true)),
      )
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
          this.write(res, 500, REJECT.internal_error.body('null'), { close: true, reqId: this.nextId() });
        } catch {
          /* already answered: nothing more can be done for this request */
        }
      }
    };
  }

  /** Answers a request outside the pipeline; closes the connection if a body is pending. */
  private plain(res: HttpResponse, req: HttpRequest, exit: Exit, detail?: string, close = false): void {
    const pending = close || hasBody(req);
    const reqId = this.nextId();
    const method = req.getMethod();
    this.log.info(
      { reqId, method: method.toUpperCase(), path: req.getUrl(), status: exit.status, reason: exit.reason, ...(detail !== undefined ? { detail } : {}) },
      'rejected',
    );
    this.write(res, exit.status, exit.body('null'), { close: pending, reqId, isHead: method === 'head' });
  }

  /** The pipeline threw outside a stage (in an exit hook): log it, and answer if nothing was. */
  private readonly failed = (ctx: HttpContext, e: unknown): void => {
    this.log.error({ err: e, reqId: ctx.reqId }, 'request failed outside a stage');
    try {
      this.respond(ctx, REJECT.internal_error); // no-op if already answered or gone
    } catch {
      /* the connection is gone */
    }
  };

  private nextId(): string {
    return this.idPrefix + (++this.seq).toString(36);
  }

  private onTipAddresses(res: HttpResponse, req: HttpRequest, isHead: boolean): void {
    const tip = this.deps.tipAddresses;
    const head: RequestHead = { host: req.getHeader('host'), contentType: '', contentLength: -1, apiKey: req.getHeader('x-api-key') };
    const t0 = performance.now();
    const a = tip(head, req.getQuery() ?? '', req.getHeader('if-none-match'));
    const reqId = this.nextId();
    this.log.info(
      {
        reqId,
        method: isHead ? 'HEAD /tip-addresses' : 'GET /tip-addresses',
        status: a.status,
        ...(a.reason !== undefined ? { reason: a.reason } : {}),
        ...(a.account !== undefined ? { account: a.account } : {}),
        us: Math.round((performance.now() - t0) * 1000),
      },
      a.status < 400 ? 'request' : 'rejected',
    );
    this.write(res, a.status, a.body, { ...(a.headers !== undefined ? { headers: a.headers } : {}), reqId, isHead, close: hasBody(req) });
  }

  private onPost(res: HttpResponse, req: HttpRequest): void {
    this.busy?.touch();
    const cl = req.getHeader('content-length');
    const framing = framingProblem(req, cl);
    if (framing !== null) {
      if (framing.answerable) this.plain(res, req, REJECT.bad_framing, framing.detail, true);
      else {
        // uWS closes such a connection itself, dropping any answer: say exactly that, and close.
        this.log.info({ reqId: this.nextId(), method: 'POST', path: req.getUrl(), reason: 'bad_framing', detail: framing.detail }, 'closed unanswered');
        res.close();
      }
      return;
    }
    const contentLength = cl === '' ? -1 : Number(cl);
    const head: RequestHead = {
      host: req.getHeader('host'),
      contentType: req.getHeader('content-type'),
      contentLength,
      apiKey: req.getHeader('x-api-key'),
    };
    const hasBody = contentLength > 0 || (contentLength < 0 && req.getHeader('transfer-encoding') !== '');
    const reqId = this.nextId();
    const ctx = new HttpContext(reqId, performance.now(), head, res, new BodyReader<HttpContext>(res, hasBody, this.failed));
    if (this.timeMask >= 0 && (this.seq & this.timeMask) === 0) ctx.timed = true;
    res.onAborted(() => ctx.abort());
    this.inFlight++;
    this.pipeline.run(ctx);
  }

  private onExit(ctx: HttpContext, exit: Exit, stage: StageName, err: unknown): void {
    this.respond(ctx, exit);
    const micros = Math.round((performance.now() - ctx.t0) * 1000);
    this.requestLog.exit(ctx, exit, stage, err, micros);
    this.deps.observer?.request(ctx, exit, stage, micros);
    if (--this.inFlight === 0 && this.drained !== null) this.drained();
  }

  /** The one writer for pipeline answers. */
  private respond(ctx: HttpContext, exit: Exit): void {
    if (ctx.responded || ctx.aborted) return;
    ctx.responded = true;
    let headers = exit.headers;
    if (exit.reason !== 'rate_limited') {
      const extra = this.deps.answerHeaders?.(ctx);
      if (extra !== undefined) headers = headers === undefined ? extra : [...headers, ...extra];
    }
    if (ctx.timings !== null) headers = [...(headers ?? []), ['server-timing', serverTiming(ctx.timings)]];
    // A body left unread (early exit before or during reading) would be parsed as the next
    // request: close the connection instead of draining an unbounded body.
    this.write(ctx.res, exit.status, exit.body(ctx.idJson), { ...(headers !== undefined ? { headers } : {}), close: !ctx.reader.done, reqId: ctx.reqId });
  }

  /**
   * Every answer goes out here. `isHead`: a HEAD request, answered without a body; when the
   * connection closes anyway (`close`) the body may go too, no client can misread it then.
   */
  private write(res: HttpResponse, status: number, body: string, o: WriteOptions): void {
    const close = o.close === true;
    res.cork(() => {
      res.writeStatus(statusLine(status)).writeHeader('content-type', JSON_CT).writeHeader('x-request-id', o.reqId);
      if (o.headers !== undefined) for (const [k, v] of o.headers) res.writeHeader(k, v);
      // endWithoutBody only answers without arguments in this uWS build (no Content-Length then).
      if (status === 304 || (o.isHead === true && !close)) res.endWithoutBody();
      else res.end(body, close);
    });
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
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        this.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    const unfinished = this.inFlight;
    (this.app as unknown as { close(): void }).close();
    return { unfinished };
  }
}

function hasBody(req: HttpRequest): boolean {
  return req.getHeader('content-length') !== '' || req.getHeader('transfer-encoding') !== '';
}
