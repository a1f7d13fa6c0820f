/**
 * The public port: one uWS app every front end registers its routes on, listened on and drained
 * as one. Draining: /ready turns 503, the listen socket closes (no new connections), every front
 * end answers what is in flight within the grace period, then every connection is closed.
 */
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { FAIL } from '../base/errors.js';
import type { Logger } from '../log/log.js';
import { uws } from '../base/native.js';
import type { FrontEnd, PortParts } from '../front/front-end.js';
import type { Readiness } from '../front/readiness.js';
import { RequestIds } from '../front/request-ids.js';
import { RequestLog } from '../front/request-log.js';
import { writeAnswer } from './write.js';

/** A uWS route handler. */
export type Handler = (res: HttpResponse, req: HttpRequest) => void;

/** A front end on the public uWS port. */
export type UwsFrontEnd = FrontEnd<TemplatedApp>;

/** What the front ends of the uWS port share: the transport-neutral parts, and the handler guard. */
export interface UwsPortParts extends PortParts {
  /**
   * A handler that throws is answered 500 instead: uWS aborts the whole process when a handler
   * returns without answering or registering onAborted.
   */
  guard(h: Handler): Handler;
}

/** The parts the front ends of one port share (front/front-end.ts). */
export function portParts(log: Logger, readiness: Readiness, idPrefix?: string): UwsPortParts {
  const ids = new RequestIds(idPrefix);
  return {
    log,
    requestLog: new RequestLog(log),
    ids,
    readiness,
    guard: (h: Handler): Handler => {
      return (res, req) => {
        try {
          h(res, req);
        } catch (e) {
          log.error({ err: e }, 'handler failed');
          try {
            writeAnswer(res, 500, FAIL.internal_error.body('null'), { close: true, reqId: ids.next() });
          } catch {
            /* already answered: nothing more can be done for this request */
          }
        }
      };
    },
  };
}

export class PublicPort {
  app: TemplatedApp;
  private listenSocket: us_listen_socket | null = null;
  private bound: { host: string; port: number } | null = null;
  /** Apps replaced by `swap`, serving the connections they accepted until those close. */
  private readonly retired: TemplatedApp[] = [];

  /**
   * `makeApp`: an app other than plain HTTP (TLS: tls/edge.ts), built with `register`, which it
   * calls wherever the routes must be (its own router, every server name's).
   */
  constructor(
    readonly frontEnds: readonly UwsFrontEnd[],
    private readonly readiness: Readiness,
    makeApp?: (register: (app: TemplatedApp) => void) => TemplatedApp,
  ) {
    const register = (app: TemplatedApp) => {
      for (const f of frontEnds) f.register(app);
    };
    if (makeApp !== undefined) this.app = makeApp(register);
    else register((this.app = uws().App()));
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (sock) => {
        if (sock === false) return reject(new Error(`cannot listen on ${host}:${port}`));
        this.listenSocket = sock;
        this.readiness.listening = true;
        const bound = uws().us_socket_local_port(sock as never);
        this.bound = { host, port: bound };
        resolve(bound);
      });
    });
  }

  /**
   * Puts `app` (its routes registered) in place of the app listening: it listens on the same
   * address (SO_REUSEPORT), then the old listen socket closes; the old app keeps serving the
   * connections it accepted. False (nothing changed) when not listening or draining.
   */
  swap(app: TemplatedApp): boolean {
    if (this.listenSocket === null || this.bound === null || this.readiness.draining) return false;
    const got: { sock: us_listen_socket | false } = { sock: false };
    // uWS calls back before listen returns.
    app.listen(this.bound.host, this.bound.port, (s) => {
      got.sock = s;
    });
    if (got.sock === false) return false;
    // The old listen socket closes after the loop's next poll has accepted what the kernel queued
    // on it meanwhile (closing it drops its queue): only a connection arriving in that instant is lost.
    const old = this.listenSocket;
    setImmediate(() => uws().us_listen_socket_close(old));
    this.listenSocket = got.sock;
    this.retired.push(this.app);
    this.app = app;
    return true;
  }

  async drain(graceMs: number): Promise<{ unfinished: number }> {
    this.readiness.draining = true;
    if (this.listenSocket !== null) {
      uws().us_listen_socket_close(this.listenSocket);
      this.listenSocket = null;
    }
    const drained = await Promise.all(this.frontEnds.map((f) => f.drain(graceMs)));
    for (const app of [...this.retired, this.app]) (app as unknown as { close(): void }).close();
    return { unfinished: drained.reduce((n, d) => n + d.unfinished, 0) };
  }
}
