/**
 * Keep-warm's view of a WebSocket upstream's connections (keep-warm.ts has the rule): every open
 * connection (up to the kept count) is kept warm; the client reopens a lost one itself (0.1 s
 * doubling to 5 s) and keep-warm proves the new one at its next look. A probe is one more call
 * in flight with an id of its own, sent only while no call waits and the in-flight bound leaves
 * room for a call beside it; a submission sent meanwhile takes the connection with fewer calls in
 * flight (the other one, with two), or follows the probe's frame on the same one.
 */
import WebSocket from 'ws';
import type { WarmConnections } from '../keep-warm.js';
import type { Answer, CallTimes } from '../upstream.js';

/** What keep-warm reads of a connection (ws-upstream.ts's `Conn`). */
export interface WarmConn {
  readonly ws: WebSocket;
  readonly open: boolean;
  /** Answers matched on it. */
  readonly uses: number;
}

/** What keep-warm reads of the WebSocket upstream (ws-upstream.ts). */
export interface WsWarmSide<C extends WarmConn> {
  readonly conns: readonly (C | undefined)[];
  readonly waiting: { readonly length: number };
  readonly pending: { readonly size: number };
  readonly maxInFlight: number;
  write(conn: C, method: string, paramsJson: string, times: CallTimes, resolve: (a: Answer) => void): void;
}

export function wsWarm<C extends WarmConn>(u: WsWarmSide<C>): WarmConnections<C> {
  return {
    kept: (n) => u.conns.slice(0, n).filter((c): c is C => c?.open === true),
    uses: (c) => c.uses,
    proven: (c) => c.uses > 0,
    takeForProbe: (c) => c.open && c.ws.readyState === WebSocket.OPEN && u.waiting.length === 0 && u.pending.size + 1 < u.maxInFlight,
    probe: (c, timeoutMs) => new Promise<Answer>((resolve) => u.write(c, 'eth_chainId', '[]', { timeoutMs, queueMs: timeoutMs }, resolve)),
  };
}
