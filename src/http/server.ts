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
import { FastLog, quote } from '../access-log.js';
import { uws } from '../native.js';
import { RequestContext, type BaseCtx, type BodyResult, type BodySource, type RequestHead } from '../pipeline/context.js';
import { Later } from '../pipeline/later.js';
import { STAGE_NAMES, STAGE_SAMPLE_MASK, type Pipeline, type PipelineHooks } from '../pipeline/pipeline.js';
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
  request(ctx: BaseCtx, exit: Exit, stage: number, micros: number): void;
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

/** A context that is also the body source: it owns the uWS response for its request. */
class HttpContext extends RequestContext implements BodySource {
  responded = false;
  /** True once the whole body was read, so the connection can be kept alive after answering. */
  bodyDone: boolean;
  timings: Float64Array | null = null;
  private chunks: Buffer[] | null = null;
  received = 0;
  private settle: Later<BodyResult> | null = null;

  constructor(
    reqId: string,
    t0: number,
    head: RequestHead,
    readonly res: HttpResponse,
    hasBody: boolean,
    /** Answers 500 and logs when the pipeline throws outside a stage (the server's one handler). */
    private readonly onFailure: (ctx: HttpContext, e: unknown) => void,
  ) {
    super(reqId, t0, head, undefined as unknown as BodySource);
    (this as { bodySource: BodySource }).bodySource = this;
    this.bodyDone = !hasBody;
  }

  read(cap: number): Later<BodyResult> {
    const later = new Later<BodyResult>();
    if (this.aborted) {
      later.settle('aborted');
      return later;
    }
    this.settle = later;
    this.res.onData((ab, isLast) => {
      if (this.settle === null) return; // already settled (cap reached): drop the rest
      const size = this.received + ab.byteLength;
      if (size > cap) return this.finish('too_large');
      this.received = size;
      if (isLast && this.chunks === null) {
        // The common case: the whole body in one chunk, decoded straight out of uWS's buffer
        // (valid only during this call, which is why the pipeline continues synchronously).
        this.bodyDone = true;
        return this.finish({ text: Buffer.from(ab).toString('utf8'), bytes: size });
      }
      (this.chunks ??= []).push(Buffer.from(new Uint8Array(ab))); // copy: ab is neutered on return
      if (isLast) {
        this.bodyDone = true;
        this.finish({ text: Buffer.concat(this.chunks, size).toString('utf8'), bytes: size });
      }
    });
    return later;
  }

  /** Settles the read; the pipeline continues from here, synchronously. */
  private finish(r: BodyResult): void {
    const s = this.settle;
    this.settle = null;
    this.chunks = null;
    if (s === null) return;
    try {
      s.settle(r);
    } catch (e) {
      this.onFailure(this, e);
    }
  }

  /** Called from onAborted: a pending body read settles as 'aborted' so the request is logged. */
  abort(): void {
    this.aborted = true;
    if (this.settle !== null) this.finish('aborted');
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
  private readonly fast: FastLog;
  /** Every request is timed per stage with Server-Timing on; else 1 in 64 feeds the metrics. */
  private readonly timeMask: number;
  private readonly busy: { touch(): void } | undefined;

  constructor(private readonly deps: ServerDeps) {
    this.log = deps.log;
    this.fast = new FastLog(deps.log);
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
      .post('/', this.guard((res, req) => this.onPost(res, req)))
      .any('/', notAllowed)
      .get('/health', health(false))
      .head('/health', health(true))
      .any('/health', notAllowed)
      .get('/ready', ready(false))
      .head('/ready', ready(true))
      .any('/ready', notAllowed)
      .get('/tip-addresses', this.guard((res, req) => this.onTipAddresses(res, req, false)))
      .head('/tip-addresses', this.guard((res, req) => this.onTipAddresses(res, req, true)))
      .any('/tip-addresses', notAllowed)
      .any('/*', this.guard((res, req) => this.plain(res, req, REJECT.not_found)));
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
    this.log.info({ reqId, method: method.toUpperCase(), path: req.getUrl(), status: exit.status, reason: exit.reason, ...(detail !== undefined ? { detail } : {}) }, 'rejected');
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
    this.log.info({ reqId, method: isHead ? 'HEAD /tip-addresses' : 'GET /tip-addresses', status: a.status, ...(a.reason !== undefined ? { reason: a.reason } : {}), ...(a.account !== undefined ? { account: a.account } : {}), us: Math.round((performance.now() - t0) * 1000) }, a.status < 400 ? 'request' : 'rejected');
    this.write(res, a.status, a.body, { ...(a.headers !== undefined ? { headers: a.headers } : {}), reqId, isHead, close: hasBody(req) });
  }

  private onPost(res: HttpResponse, req: HttpRequest): void {
    this.busy?.touch();
    const cl = req.getHeader('content-length');
    const te = req.getHeader('transfer-encoding');
    // Framing a proxy in front could read differently (RFC 9112 §6.3): refused and closed,
    // before anything is read. uWS itself reads the first Content-Length and ignores codings.
    let cls = 0;
    let tes = 0;
    req.forEach((k) => {
      if (k === 'content-length') cls++;
      else if (k === 'transfer-encoding') tes++;
    });
    if (cls > 1 || tes > 1 || (tes === 1 && (cls === 1 || te.toLowerCase() !== 'chunked'))) {
      const detail = cls > 1 ? `${cls} Content-Length headers` : tes > 1 ? `${tes} Transfer-Encoding headers` : cls === 1 ? 'both Content-Length and Transfer-Encoding' : `Transfer-Encoding ${quote(te, 40)}`;
      this.plain(res, req, REJECT.bad_framing, detail, true);
      return;
    }
    if (cl !== '' && !CONTENT_LENGTH.test(cl)) {
      // uWS closes such a connection itself, dropping any answer: say exactly that, and close.
      this.log.info({ reqId: this.nextId(), method: 'POST', path: req.getUrl(), reason: 'bad_framing', detail: `invalid Content-Length ${quote(cl, 40)}: closed without an answer` }, 'closed unanswered');
      res.close();
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
    const ctx = new HttpContext(this.nextId(), performance.now(), head, res, hasBody, this.failed);
    if (this.timeMask >= 0 && (this.seq & this.timeMask) === 0) ctx.timed = true;
    res.onAborted(() => ctx.abort());
    this.inFlight++;
    this.pipeline.run(ctx);
  }

  private onExit(ctx: HttpContext, exit: Exit, stage: number, err: unknown): void {
    this.respond(ctx, exit);
    const micros = Math.round((performance.now() - ctx.t0) * 1000);
    this.logExit(ctx, exit, stage, err, micros);
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
    this.write(ctx.res, exit.status, exit.body(ctx.idJson), { ...(headers !== undefined ? { headers } : {}), close: !ctx.bodyDone, reqId: ctx.reqId });
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

  private logExit(ctx: HttpContext, exit: Exit, stage: number, err: unknown, micros: number): void {
    const rpc = ctx.rpc;
    const ok = exit.reason === 'ok';
    // eth_chainId is the clients' keep-alive: its successes log at debug, everything else at info.
    const level = ok && rpc?.method === 'eth_chainId' ? 'debug' : 'info';
    if (err !== undefined) {
      // Rare: let pino serialize the error (stack, cause).
      this.log.error({ reqId: ctx.reqId, status: exit.status, stage: STAGE_NAMES[stage], err }, 'request failed');
      return;
    }
    const log = this.fast;
    if (!log.enabled(level)) return;
    const method = rpc === undefined ? '"POST /"' : rpc.method === 'eth_sendRawTransaction' || rpc.method === 'eth_chainId' ? '"' + rpc.method + '"' : quote(rpc.method, 64);
    let f = '"reqId":"' + ctx.reqId + '","method":' + method + ',"status":' + exit.status + ',"us":' + micros;
    if (!ok) {
      f += ',"reason":"' + exit.reason + '","stage":"' + (STAGE_NAMES[stage] ?? stage) + '"';
      if (exit.detail !== undefined) f += ',"detail":' + quote(exit.detail);
    }
    if (ctx.chain !== undefined) f += ',"chainId":' + ctx.chain.chainId;
    if (ctx.account !== undefined) f += ',"account":"' + ctx.account.id + '"';
    if (ctx.tx !== undefined) f += ',"tx":"' + ctx.tx.hash + '"';
    // The client left before its answer (after the forward was sent): the outcome above is
    // real, but nobody received it; support needs to tell the two apart.
    if (ctx.aborted && exit.reason !== 'client_closed') f += ',"clientGone":true';
    log.write(level, f, ok ? 'request' : 'rejected');
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

/** RFC 9110: 1*DIGIT (at most 15 here: beyond any body cap, and exact as a double). */
const CONTENT_LENGTH = /^\d{1,15}$/;

function serverTiming(t: Float64Array): string {
  let s = '';
  for (let i = 0; i < t.length; i++) {
    const ms = t[i]!;
    if (ms > 0) s += (s === '' ? '' : ', ') + `${STAGE_NAMES[i]};dur=${ms.toFixed(3)}`;
  }
  return s;
}
