/**
 * Keep-warm's view of an HTTP upstream's connections (keep-warm.ts has the rule): the first
 * connections opened are kept warm, and a probe takes a free one only when a submission arriving
 * during it would still find what it would have found without it (another free proven connection
 * when this one is proven; else another free one, or room to open one), and no call waits.
 */
import type { WarmConnections } from '../keep-warm.js';
import type { Answer } from '../upstream.js';
import type { Conn, HttpConnections } from './http-connections.js';

/** What keep-warm reads of the HTTP upstream (http-upstream.ts). */
export interface HttpWarmSide {
  readonly conns: HttpConnections;
  /** Calls waiting for a connection. */
  readonly queued: number;
  probe(c: Conn, timeoutMs: number): Promise<Answer>;
}

export function httpWarm(u: HttpWarmSide): WarmConnections<Conn> {
  return {
    kept: (n) => u.conns.oldest(n),
    uses: (c) => c.uses,
    proven: (c) => c.proven,
    takeForProbe(c) {
      if (c.busy || u.queued > 0) return false;
      const { free, proven, room } = u.conns.freeCounts();
      const otherProven = proven - (c.proven ? 1 : 0);
      const leftForACall = c.proven ? otherProven > 0 : otherProven > 0 || free > 1 || room;
      return leftForACall && u.conns.takeThis(c);
    },
    probe: (c, timeoutMs) => u.probe(c, timeoutMs),
  };
}
