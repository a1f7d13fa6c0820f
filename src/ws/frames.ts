/**
 * The WebSocket transport: a second front end on the public port feeding the same stages as POST /
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
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import type { AdmissionParts } from '../admission/admission.js';
import type { WebSocketConfig } from '../config/config.js';
import { REJECT, reject, type Exit, FAIL } from '../base/errors.js';
import type { UwsFrontEnd, UwsPortParts } from '../http/port.js';
import type { ConnectionCounts } from '../limits/shared-tables.js';
import { uws } from '../base/native.js';
import { AnswerPath, type AnswerWriter } from '../pipeline/answer-path.js';
import { fieldSetter, type RequestHead } from '../pipeline/context.js';
import type { Pipeline, PipelineHooks, RequestObserver } from '../pipeline/pipeline.js';
import { idJsonOfText } from '../rpc/rpc-id.js';
import { overBodyCap } from '../stages/size-cap.js';
import { CLOSE, type Connection, FrameContext } from './connection.js';
import { WholeBody } from '../front/whole-body.js';
import { createUpgrade } from './upgrade.js';
import { utf8Text } from '../front/utf8.js';
import { Subscriptions, type StatusFeed } from './subscriptions.js';

const setRpc = fieldSetter('rpc');
const NO_PARAMS: readonly unknown[] = Object.freeze([]);

/** Frames up to this many times the body cap are read to answer them by id. */
const FRAME_SLACK = 4;

/** How often open connections' keys are checked against the store (a revoked key closes them within the store's bound plus this). */
const REVOCATION_CHECK_MS = 200;

/** What the transport reports (metrics): connections opened and closed, by close code. */
export interface WsObserver {
  opened(): void;
  closed(code: number): void;
}

export interface WsDeps {
  readonly port: UwsPortParts;
  readonly config: WebSocketConfig;
  readonly maxBodyBytes: number;
  /** Told of every frame taken (the thread's activity; src/rehearsal/activity.ts). */
  readonly activity?: { touch(): void };
  /** The host table and the account store the upgrade admits by (admission.ts). */
  readonly admission: AdmissionParts;
  readonly buildPipeline: (hooks: PipelineHooks) => Pipeline;
  readonly observer?: RequestObserver;
  readonly connections?: WsObserver;
  /** Open connections per account, per process (shared by the worker threads where there are several). */
  readonly counts: ConnectionCounts;
  /** The chains that track their transactions (`chains[].track`): their status feeds, for `transactionStatus` subscriptions (subscriptions.ts). */
  readonly tracking?: ReadonlyMap<number, { readonly feed: StatusFeed; readonly maxSubscriptions: number }>;
}

export class WebSocketTransport implements UwsFrontEnd, AnswerWriter<FrameContext> {
  readonly transport = 'ws';
  private readonly pipeline: Pipeline;
  private readonly answers: AnswerPath<FrameContext>;
  /** Told of every frame taken (the thread's activity), where something listens. */
  private readonly activity: { touch(): void } | undefined;
  private readonly conns = new Set<Connection>();
  /** The keys' check, while a connection is open (REVOCATION_CHECK_MS). */
  private timer: NodeJS.Timeout | null = null;
  private drained = false;
  private readonly softBackpressure: number;
  /** A frame past `maxInFlight`: overloaded, naming the cap (built once). */
  private readonly tooManyInFlight: Exit;
  /** Tracked chains' feeds (null: no chain tracks, no frame is looked at); each connection's subscriptions. */
  private readonly tracking: WsDeps['tracking'] | null;
  private readonly subs = new Map<Connection, Subscriptions>();

  constructor(private readonly deps: WsDeps) {
    this.activity = deps.activity;
    this.tracking = deps.tracking !== undefined && deps.tracking.size > 0 ? deps.tracking : null;
    this.answers = new AnswerPath<FrameContext>(this, {
      log: deps.port.requestLog,
      via: 'ws',
      ...(deps.observer !== undefined ? { observer: deps.observer } : {}),
    });
    // Its requests are sampled into the per-stage series by the pipeline, as every front end's.
    this.pipeline = deps.buildPipeline({ exit: this.answers.exit, failed: (ctx, e) => this.failed(ctx as FrameContext, e), observer: deps.observer });
    this.softBackpressure = deps.config.maxBackpressureBytes >> 1;
    this.tooManyInFlight = reject(
      'overloaded',
      `Too many requests in flight on this connection: at most ${deps.config.maxInFlight} (websocket.maxInFlight); wait for answers, or open another connection`,
      { limit: deps.config.maxInFlight, setting: 'websocket.maxInFlight' },
    );
  }

  /** Registers `GET /` upgrades on the app (uWS gives an upgrade route precedence over the other front ends' `/` routes). */
  register(app: TemplatedApp): void {
    const c = this.deps.config;
    const guard = this.deps.port.guard;
    const admitted = createUpgrade({
      port: this.deps.port,
      admission: this.deps.admission,
      counts: this.deps.counts,
      maxConnectionsPerAccount: c.maxConnectionsPerAccount,
      draining: () => this.isDraining(),
    });
    app.ws<{ conn: Connection }>('/', {
      // Frames over the body cap, up to 4 times it, are answered payload_too_large by their id;
      // beyond that uWS drops the connection without reading them (the client sees 1006).
      maxPayloadLength: this.deps.maxBodyBytes * FRAME_SLACK,
      idleTimeout: c.idleTimeoutSeconds,
      sendPingsAutomatically: true,
      maxBackpressure: c.maxBackpressureBytes,
      closeOnBackpressureLimit: 0,
      compression: uws().DISABLED,
      upgrade: (res, req, context) => guard((r, q) => admitted(r, q, context))(res, req),
      open: (ws) => this.open(ws),
      message: (ws, message, isBinary) => this.message(ws.getUserData().conn, message, isBinary),
      close: (ws, code) => this.close(ws.getUserData().conn, code),
    });
  }

  private open(ws: WebSocket<{ conn: Connection }>): void {
    const conn = ws.getUserData().conn;
    conn.ws = ws;
    this.conns.add(conn);
    // The keys' check runs while a connection is open: an edge with none is not woken for it.
    if (this.timer === null && !this.drained) {
      this.timer = setInterval(() => this.checkKeys(), REVOCATION_CHECK_MS);
      this.timer.unref();
    }
    this.deps.connections?.opened();
    this.deps.port.log.info({ conn: conn.id, account: conn.account, chainId: conn.chainId }, 'websocket open');
  }

  private message(conn: Connection, message: ArrayBuffer, isBinary: boolean): void {
    const t0 = performance.now();
    this.activity?.touch();
    const bytes = message.byteLength;
    // The frame's buffer is valid only during this call: decoded now (a copy).
    const text = utf8Text(message);
    const head: RequestHead = { host: conn.host, json: !isBinary, declaredBytes: bytes, apiKey: conn.apiKey };
    const ctx = new FrameContext(conn.id + '.' + (++conn.frames).toString(36), t0, head, new WholeBody({ text, bytes }), this.pipeline.initFields, conn);
    conn.inFlight.add(ctx);
    this.answers.begin();
    // Refused before any stage (nothing sent): the id is read from the frame so the answer can be matched.
    const refusal =
      overBodyCap(bytes, this.deps.maxBodyBytes) ??
      (this.isDraining() || conn.closing === CLOSE.goingAway
        ? REJECT.draining
        : conn.inFlight.size > this.deps.config.maxInFlight
          ? this.tooManyInFlight
          : conn.ws!.getBufferedAmount() > this.softBackpressure
            ? REJECT.overloaded
            : null);
    if (refusal === null) {
      if (this.tracking !== null && this.subscription(conn, ctx, text)) return;
      this.pipeline.run(ctx);
      return;
    }
    ctx.idJson = idJsonOfText(text);
    this.answers.exit(ctx, refusal, 'front_end', undefined);
  }

  /** A `txgate_subscribe` / `txgate_unsubscribe` frame on a tracked chain's connection, answered here (true); else false. */
  private subscription(conn: Connection, ctx: FrameContext, text: string): boolean {
    const t = this.tracking!.get(conn.chainId);
    if (t === undefined) return false;
    let s = this.subs.get(conn);
    if (s === undefined) {
      s = new Subscriptions(t.feed, conn.account, t.maxSubscriptions, (frame) => this.push(conn, frame));
      this.subs.set(conn, s);
    }
    const a = s.answer(text);
    if (a === null) return false;
    ctx.idJson = a.idJson;
    // Its method named, as a parsed request's: counted under `other` and logged as itself (docs/operations.md "Metrics").
    setRpc(ctx, { id: 0, idJson: a.idJson, method: a.method, params: NO_PARAMS, paramsHex: false });
    this.answers.exit(ctx, a.exit, 'front_end', undefined);
    return true;
  }

  /** A subscription's push; a connection that cannot take it is closed, as for an answer. */
  private push(conn: Connection, frame: string): void {
    const ws = conn.ws;
    if (ws === null) return;
    if (ws.send(frame, false, false) === 2) this.end(conn, CLOSE.notReading, 'answers not read');
  }

  /** The pipeline threw outside a stage (in its answer path, after a wait): said, and answered if nothing was. */
  private failed(ctx: FrameContext, e: unknown): void {
    this.deps.port.log.error({ err: e, reqId: ctx.reqId }, 'request failed outside a stage');
    try {
      this.write(ctx, FAIL.internal_error); // nothing if answered already
    } catch {
      /* the connection is gone */
    }
  }

  /** The transport's answer writer: one frame per request, unless the connection is gone (then false: unanswered). */
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
    if (this.conns.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
    this.subs.get(conn)?.close();
    this.subs.delete(conn);
    if (conn.counted) this.deps.counts.release(conn.account);
    conn.counted = false;
    // Requests not yet forwarded stop at their next step (never sent); those written to a
    // sequencer finish and are logged with their outcome as closed unanswered.
    for (const ctx of conn.inFlight) ctx.aborted = true;
    this.deps.connections?.closed(code);
    this.deps.port.log.info(
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
    const store = this.deps.admission.store;
    if (!store.ready || store.stale) return; // a service-side problem: no client is cut off for it
    for (const conn of this.conns) {
      if (conn.closing !== 0 || store.byKeyHash(conn.keyHash) !== undefined) continue;
      conn.closing = CLOSE.revoked;
      if (conn.inFlight.size === 0) this.end(conn, CLOSE.revoked, 'api key revoked');
    }
  }

  /** The service is draining (the port sets it before it drains its front ends). */
  private isDraining(): boolean {
    return this.deps.port.readiness.draining;
  }

  /** Drain: new frames answered `draining`, those in flight answered (within `graceMs`), then close 1001. */
  async drain(graceMs: number): Promise<{ unfinished: number }> {
    this.drained = true;
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
