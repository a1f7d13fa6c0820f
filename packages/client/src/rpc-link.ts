/**
 * What a link to txgate is, whichever transport carries it (link.ts opens one by the URL's
 * scheme: http.ts or ws.ts): one JSON-RPC call at a time from the caller's side, each ending in
 * an RpcAnswer, and the bounds it is opened with.
 */
import type { RpcAnswer } from './http.js';

export interface RpcLink {
  /** One JSON-RPC call: `auth` sends the API key (HTTP; the WebSocket was authenticated at its upgrade). */
  call(method: string, params: readonly unknown[], auth: boolean): Promise<RpcAnswer>;
  close(): Promise<void>;
}

export interface LinkTimes {
  readonly connectTimeoutMs: number;
  readonly timeoutMs: number;
  /** PEM certificate(s) of the CA to trust for https:// and wss:// (a private deployment), instead of the system's. */
  readonly ca?: string | Buffer;
}
