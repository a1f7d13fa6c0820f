/**
 * The WebSocket transport's state: one open connection (what the upgrade admitted, and its requests in
 * flight), and a frame's request context (a frame is the whole body: front/whole-body.ts).
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { WebSocket } from 'uWebSockets.js';
import type { WholeBody } from '../front/whole-body.js';
import { RequestContext, type RequestHead } from '../pipeline/context.js';

/** Close codes the transport sends (docs/clients.md, "the WebSocket transport"). */
export const CLOSE = {
  /** Drain: the service is stopping; reconnect (another edge takes it). */
  goingAway: 1001,
  /** The connection's answers were not read: an answer could not be queued. */
  notReading: 1013,
  /** The connection's API key was revoked (or its account removed). */
  revoked: 4001,
} as const;

/** One open connection: what the upgrade established, and its requests in flight. */
export class Connection {
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

export class FrameContext extends RequestContext {
  constructor(
    reqId: string,
    t0: number,
    head: RequestHead,
    body: WholeBody,
    init: (ctx: object) => void,
    readonly conn: Connection,
  ) {
    super(reqId, t0, head, body, init);
  }
}
