/**
 * A front end: one transport on the public port (HTTP's POST / and GET resources, the WebSocket
 * transport), a peer of the others. Each turns its transport's requests into the transport-neutral
 * head (pipeline/context.ts), runs the pipeline and writes the answers through the answer path;
 * the composition root (app.ts) builds each one and hands the list to the public port
 * (http/port.ts), which registers them, listens and drains them together. A new transport is a
 * folder with a class implementing this, and a line in the composition root. Nothing here is of
 * one transport: `App` is what the front end registers on (the uWS app of http/port.ts).
 */
import type { Logger } from '../log/log.js';
import type { Readiness } from './readiness.js';
import type { RequestIds } from './request-ids.js';
import type { RequestLog } from './request-log.js';

export interface FrontEnd<App = unknown> {
  /** The `transport` label of its requests in the metrics and the log (`http`, `ws`). */
  readonly transport: string;
  /** Registers its routes on the port's app. */
  register(app: App): void;
  /**
   * Graceful stop, once the port no longer accepts connections: new requests refused, those in
   * flight answered within `graceMs`; resolves with how many were not.
   */
  drain(graceMs: number): Promise<{ unfinished: number }>;
}

/** What every front end on the public port shares. */
export interface PortParts {
  readonly log: Logger;
  /** The one log line of every request (front/request-log.ts). */
  readonly requestLog: RequestLog;
  /** Request ids, unique across the port's front ends in this process. */
  readonly ids: RequestIds;
  /** Listening, draining and the readiness checks: draining, every answer closes its connection. */
  readonly readiness: Readiness;
}
