/**
 * The WebSocket lane: a second front end on the public port feeding the same stages as POST /
 * (docs/design.md §6.3; off unless `websocket.enabled`). `GET /` with `Upgrade: websocket` is
 * authenticated once, at the upgrade (the Host picks the chain, X-Api-Key the account, as HTTP
 * refusals); then each text frame carries one JSON-RPC request, run through the pipeline with a
 * transport-neutral head (the connection's host and key, the frame's size) and answered by a
 * frame with its id, in completion order. An error's `data.status` is the HTTP status the same
 * refusal gets over HTTP.
 *
 * A frame over the body cap is answered `payload_too_large` by its id (up to 4 times the cap;
 * beyond, uWS drops the connection unread). Per connection: at most `maxInFlight` requests in flight and half the backpressure limit of
 * answers unread (beyond either, a frame is answered `overloaded` before any stage: nothing
 * sent); an answer that cannot be queued at all closes the connection (1013). A key revoked
 * while its connections are open closes them (4001) once what is in flight is answered. Drain:
 * new frames are answered `draining`, those in flight are answered, then close 1001.
 *
 * A connection that drops loses nothing silently: its requests not yet forwarded stop (never
 * sent), those already written to a sequencer finish, and each is logged with its outcome as
 * `closed unanswered` (the request log line), so support can say which.
 */
import type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, us_socket_context_t } from 'uWebSockets.js';
import { authenticate, keySha256 } from '../accounts/keys.js';
import type { AccountStore } from '../accounts/types.js';
import type { HostTable } from '../chains.js';
import type { ConnectionCounts } from '../limits/shared-tables.js';
import type { WebSocketConfig } from '../config.js';
import { Exit, REJECT, reject } from '../errors.js';
import type { Logger } from '../log.js';
import { AnswerPath, type AnswerWriter } from '../pipeline/answer-path.js';
import type { RequestLog } from '../http/request-log.js';
import { chainGrant } from '../stages/grant.js';
import { RequestContext, type Body, type BodyResult, type BodySource, type RequestHead } from '../pipeline/context.js';
import { Later } from '../pipeline/later.js';
import type { Pipeline, PipelineHooks, RequestObserver } from '../pipeline/pipeline.js';
import { idJsonOfText } from '../rpc-id.js';
import { uws } from '../native.js';
import { announcesBody, H, writeAnswer } from '../http/write.js';
import { duplicateHeader } from '../http/framing.js';
import { quote } from '../log-line.js';

/** The upgrade refusal for a version other than 13, naming the one supported (RFC 6455 §4.4). */
const WS_VERSION = reject('websocket_version', undefined, undefined, [['sec-websocket-version', '13']]);

/** Close codes the lane sends (README "WebSocket lane"). */
export const CLOSE = {
  /** Drain: the service is stopping; reconnect (another edge takes it). */
  goingAway: 1001,
  /** The connection's answers were not read: an answer could not be queued. */
  notReading: 1013,
  /** The connection's API key was revoked (or its account removed). */
  revoked: 4001,
} as const;

/** Frames up to this many times the body cap are read to answer them by id. */
const FRAME_SLACK = 4;

/** How often open connections' keys are checked against the store (a revoked key closes them within the store's bound plus this). */
const REVOCATION_CHECK_MS = 200;

/** What the lane reports (metrics): connections opened and closed, by close code. */
export interface LaneObserver {
  opened(): void;
  closed(code: number): void;
}

export interface LaneDeps {
  readonly config: WebSocketConfig;
  readonly maxBodyBytes: number;
  readonly hosts: HostTable;
  readonly store: AccountStore;
  readonly log: Logger;
  readonly requestLog: RequestLog;
  /** The server's handler guard: a handler that throws is answered 500 (uWS aborts on an unanswered request). */
  readonly guard: (h: (res: HttpResponse, req: HttpRequest) => void) => (res: HttpResponse, req: HttpRequest) => void;
  readonly buildPipeline: (hooks: PipelineHooks) => Pipeline;
  readonly observer?: RequestObserver;
  readonly lane?: LaneObserver;
  readonly nextId: () => string;
  readonly draining: () => boolean;
  /** Open connections per account, per process (shared by the worker threads where there are several). */
  readonly counts: ConnectionCounts;
}

/** One open connection: what the upgrade established, and its requests in flight. */
class Connection {
  ws: WebSocket<{ conn: Connection }> | null = null;
  readonly inFlight = new Set<FrameContext>();
  /** A close code to send once nothing is in flight (revoked key, drain), else 0. */
  closing = 0;
  answered = 0;
  /** Frames received: a frame's request id is the connection's id, a dot and this count. */
  frames = 0;
  /** Counted in the per-account cap (released when it closes). */
  counted = false;
  readonly t0 = performance.now();

  constructor(
    readonly id: string,
    readonly host: string,
    readonly apiKey: string,
    readonly keyHash: string,
    readonly account: string,
    readonly chainId: number,
  ) {}
}

/** A frame is the whole body: read at once (the frame cap is the body cap). */
class FrameBody implements BodySource {
  constructor(private readonly body: Body) {}

  read(cap: number): Later<BodyResult> {
    const l = new Later<BodyResult>();
    l.settle(this.body.bytes > cap ? 'too_large' : this.body);
    return l;
  }
}

class FrameContext extends RequestContext {
  constructor(
    reqId: string,
    t0: number,
    head: RequestHead,
    body: FrameBody,
    init: (ctx: object) => void,
    readonly conn: Connection,
  ) {
    super(reqId, t0, head, body, init);
  }
}

export class WebSocketLane implements AnswerWriter<FrameContext> {
  private readonly pipeline: Pipeline;
  private readonly answers: AnswerPath<FrameContext>;
  private readonly conns = new Set<Connection>();
  private timer: NodeJS.Timeout | null = null;
  private readonly softBackpressure: number;

  constructor(private readonly deps: LaneDeps) {
    this.answers = new AnswerPath<FrameContext>(this, {
      log: deps.requestLog,
      via: 'ws',
      ...(deps.observer !== undefined ? { observer: deps.observer } : {}),
    });
    this.pipeline = deps.buildPipeline({ exit: this.answers.exit });
    this.softBackpressure = deps.config.maxBackpressureBytes >> 1;
  }

  /** Registers `GET /` upgrades on the app (before its other routes for `/`). */
  register(app: TemplatedApp): void {
    const c = this.deps.config;
    app.ws<{ conn: Connection }>('/', {
      // Frames over the body cap, up to 4 times it, are answered payload_too_large by their id;
      // beyond that uWS drops the connection without reading them (the client sees 1006).
      maxPayloadLength: this.deps.maxBodyBytes * FRAME_SLACK,
      idleTimeout: c.idleTimeoutSeconds,
      sendPingsAutomatically: true,
      maxBackpressure: c.maxBackpressureBytes,
      closeOnBackpressureLimit: 0,
      compression: uws().DISABLED,
      upgrade: (res, req, context) => this.deps.guard((r, q) => this.upgrade(r, q, context))(res, req),
      open: (ws) => this.open(ws),
      message: (ws, message, isBinary) => this.message(ws.getUserData().conn, message, isBinary),
      close: (ws, code) => this.close(ws.getUserData().conn, code),
    });
    this.timer = setInterval(() => this.checkKeys(), REVOCATION_CHECK_MS);
    this.timer.unref();
  }

  /** The upgrade: the same refusals as the host, auth and grant stages give, as HTTP answers. */
  private upgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    const host = req.getHeader(H.host);
    const apiKey = req.getHeader(H.apiKey);
    const secKey = req.getHeader('sec-websocket-key');
    const protocol = req.getHeader('sec-websocket-protocol');
    const extensions = req.getHeader('sec-websocket-extensions');
    const version = req.getHeader(H.wsVersion);
    const withBody = announcesBody(req);
    const dup = duplicateHeader(req);
    const reqId = this.deps.nextId();
    const refuse = (exit: Exit, account?: string, detail?: string): void =>
      writeAnswer(res, exit.status, exit.body('null'), { close: true, reqId, headers: exit.headers }, (written) =>
        this.deps.requestLog.refused(
          reqId,
          'GET',
          '/',
          written ? exit.status : 0,
          exit.reason,
          `websocket upgrade${account === undefined ? '' : ` (account ${account})`}${detail === undefined ? '' : `: ${detail}`}`,
        ),
      );
    if (this.deps.draining()) return void refuse(REJECT.draining);
    if (dup !== null) return void refuse(dup.exit, undefined, dup.detail);
    // RFC 6455 §4.2.2: another version is answered 426 with the one supported.
    if (version !== '13') return void refuse(WS_VERSION, undefined, `Sec-WebSocket-Version ${quote(version, 20)}`);
    // Bytes after an upgrade's head are frames: a body there is read one way by a proxy and another by uWS.
    if (withBody) return void refuse(REJECT.bad_framing, undefined, 'an upgrade with a body');
    const chain = this.deps.hosts.lookup(host);
    if (chain === undefined) return void refuse(REJECT.misdirected_host);
    const account = authenticate(this.deps.store, apiKey);
    if (account instanceof Exit) return void refuse(account);
    const grant = chainGrant(account, chain.chainId);
    if (grant instanceof Exit) return void refuse(grant, account.id);
    const counted = this.deps.counts.acquire(account.id, this.deps.config.maxConnectionsPerAccount);
    if (counted === 'full') return void refuse(REJECT.too_many_connections, account.id);
    const conn = new Connection(reqId, host, apiKey, keySha256(apiKey), account.id, chain.chainId);
    conn.counted = counted === 'counted';
    // uWS calls open() inside upgrade(); a connection that did not open gives its place back.
    res.cork(() => res.upgrade({ conn }, secKey, protocol, extensions, context));
    if (conn.ws === null && conn.counted) {
      conn.counted = false;
      this.deps.counts.release(account.id);
    }
  }

  private open(ws: WebSocket<{ conn: Connection }>): void {
    const conn = ws.getUserData().conn;
    conn.ws = ws;
    this.conns.add(conn);
    this.deps.lane?.opened();
    this.deps.log.info({ conn: conn.id, account: conn.account, chainId: conn.chainId }, 'websocket open');
  }

  private message(conn: Connection, message: ArrayBuffer, isBinary: boolean): void {
    const t0 = performance.now();
    const bytes = message.byteLength;
    // The frame's buffer is valid only during this call: decoded now (a copy).
    const text = Buffer.from(message).toString('utf8');
    const head: RequestHead = { host: conn.host, json: !isBinary, declaredBytes: bytes, apiKey: conn.apiKey };
    const ctx = new FrameContext(conn.id + '.' + (++conn.frames).toString(36), t0, head, new FrameBody({ text, bytes }), this.pipeline.initFields, conn);
    conn.inFlight.add(ctx);
    this.answers.begin();
    // Refused before any stage (nothing sent): the id is read from the frame so the answer can be matched.
    const refusal =
      bytes > this.deps.maxBodyBytes
        ? REJECT.payload_too_large
        : this.deps.draining() || conn.closing === CLOSE.goingAway
          ? REJECT.draining
          : conn.inFlight.size > this.deps.config.maxInFlight || conn.ws!.getBufferedAmount() > this.softBackpressure
            ? REJECT.overloaded
            : null;
    if (refusal === null) {
      this.pipeline.run(ctx);
      return;
    }
    ctx.idJson = idJsonOfText(text);
    this.answers.exit(ctx, refusal, 'front_end', undefined);
  }

  /** The lane's answer writer: one frame per request, unless the connection is gone (then false: unanswered). */
  write(ctx: FrameContext, exit: Exit): boolean {
    const conn = ctx.conn;
    if (!conn.inFlight.delete(ctx)) return true; // answered already
    const ws = conn.ws;
    if (ws === null) return false;
    // uWS corks a send made outside a handler by itself (WebSocket::send).
    if (ws.send(exit.bodyWithStatus(ctx.idJson), false, false) === 2) {
      // Over the backpressure limit: the answer was dropped. The client is not reading; close
      // so that it knows its answers in flight are lost (its kit reports them uncertain).
      this.end(conn, CLOSE.notReading, 'answers not read');
      return false;
    }
    conn.answered++;
    if (conn.closing !== 0 && conn.inFlight.size === 0) this.end(conn, conn.closing, conn.closing === CLOSE.revoked ? 'api key revoked' : 'going away');
    return true;
  }

  private end(conn: Connection, code: number, why: string): void {
    const ws = conn.ws;
    if (ws === null) return;
    ws.end(code, why); // calls close() at once
  }

  private close(conn: Connection, code: number): void {
    conn.ws = null;
    this.conns.delete(conn);
    if (conn.counted) this.deps.counts.release(conn.account);
    conn.counted = false;
    // Requests not yet forwarded stop at their next step (never sent); those written to a
    // sequencer finish and are logged with their outcome as closed unanswered.
    for (const ctx of conn.inFlight) ctx.aborted = true;
    this.deps.lane?.closed(code);
    this.deps.log.info(
      {
        conn: conn.id,
        account: conn.account,
        chainId: conn.chainId,
        code,
        answered: conn.answered,
        inFlight: conn.inFlight.size,
        seconds: Math.round(performance.now() - conn.t0) / 1000,
      },
      'websocket closed',
    );
  }

  /** Closes the connections whose key no longer names an account, once what is in flight is answered. */
  private checkKeys(): void {
    const store = this.deps.store;
    if (!store.ready || store.stale) return; // a service-side problem: no client is cut off for it
    for (const conn of this.conns) {
      if (conn.closing !== 0 || store.byKeyHash(conn.keyHash) !== undefined) continue;
      conn.closing = CLOSE.revoked;
      if (conn.inFlight.size === 0) this.end(conn, CLOSE.revoked, 'api key revoked');
    }
  }

  /** Drain: new frames answered `draining`, those in flight answered (within `graceMs`), then close 1001. */
  async drain(graceMs: number): Promise<{ unfinished: number }> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    for (const conn of this.conns) {
      if (conn.closing === 0) conn.closing = CLOSE.goingAway;
      if (conn.inFlight.size === 0) this.end(conn, CLOSE.goingAway, 'going away');
    }
    await this.answers.settled(graceMs);
    const unfinished = this.answers.pending;
    for (const conn of [...this.conns]) this.end(conn, CLOSE.goingAway, 'going away');
    return { unfinished };
  }
}
