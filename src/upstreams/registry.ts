/** An Upstream for a URL: over a persistent WebSocket for ws:// and wss://, else over HTTP. */
import type { HealthBoard } from './health-board.js';
import { HttpUpstream, type Upstream } from './upstream.js';
import { WsUpstream } from './ws-upstream.js';

/**
 * `connections`: HTTP keep-alive connections (requests written at once), or over WebSocket the
 * calls in flight at once, on `wsConnections` connections.
 */
export function openUpstream(url: string, connections: number, board: HealthBoard, slot: number, wsConnections = 2): Upstream {
  return url.startsWith('ws:') || url.startsWith('wss:')
    ? new WsUpstream(url, connections, board, slot, wsConnections)
    : new HttpUpstream(url, connections, board, slot);
}
