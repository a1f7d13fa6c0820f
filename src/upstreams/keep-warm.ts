/**
 * Keep-warm: a sequencer's connections open and proven when a submission arrives after a silence.
 *
 * A sequencer (or the proxy in front of it) closes a kept-alive connection idle for longer than
 * its own timeout (uWebSockets.js after about 10 s, Node's HTTP server after 5 s, nginx after 75 s,
 * many load balancers after 60 s; undici on this side after 30 s), and the first submission after a
 * silence then opens a connection, on code the closed connection's clean-up deoptimized
 * (docs/performance.md, "A silence that costs nothing"). Keep-warm, where a chain turns it on
 * (`chains[].forward.keepWarm`), keeps the first `connections` connections of each sequencer
 * client (per thread) open and proven:
 *
 * - a connection idle for `idleMs` (between `idleMs` and 1.5 × `idleMs`: it is looked at every
 *   `idleMs / 2`, and is idle when no call or probe ended on it between two looks) gets a probe,
 *   `eth_chainId`, which resets the sequencer's idle timer and proves the connection again;
 * - a connection not proven (never opened, or closed by the peer anyway) gets one at the next look,
 *   which (re)opens it in the background; a failed probe waits 2, 4, … up to 64 looks before the
 *   next on that connection (the health prober, not keep-warm, decides that a sequencer is down).
 *
 * The rule that keeps a probe from ever crossing a submission (each kind applies it in its
 * `takeForProbe`, http/http-warm.ts and ws/ws-warm.ts):
 * - one probe at a time per sequencer client, and none while a call waits for a connection;
 * - over HTTP a connection carrying a probe is busy (one request at a time on each), so a
 *   submission never goes on it; a probe is sent only when a submission arriving during it would
 *   find what it would have found without it: another free proven connection when the probed one
 *   is proven, else another free connection or room to open one. A probe therefore never holds the
 *   connection a submission waits for;
 * - over WebSocket a probe is one more call in flight with an id of its own (answers are matched by
 *   id), sent only when the in-flight bound leaves room for a call beside it.
 * A probe is a call of its own: never one of the forward's attempts, never counted in the forward
 * metrics, never resent, and nothing a probe answers reaches a client. Probes are counted in
 * `txgate_sequencer_keepalive_probes_total` (per thread, summed at a scrape).
 */
import type { Answer, KeepWarmOptions } from './upstream.js';

export const PROBE_RESULTS = ['answered', 'failed'] as const;
/** Keep-warm probes sent on this thread, by how they ended; the metrics read them at a scrape. */
export const keepWarmProbes: Record<(typeof PROBE_RESULTS)[number], number> = { answered: 0, failed: 0 };

/** One kind of upstream's connections as keep-warm sees them. */
export interface WarmConnections<C> {
  /** The connections kept warm: at most `n` (a kind that opens connections on demand opens the missing ones). */
  kept(n: number): readonly C[];
  /** Calls and probes ended on `c` since it was made: unchanged between two looks, it was idle. */
  uses(c: C): number;
  /** Carried an answer since it last (re)connected. */
  proven(c: C): boolean;
  /** Takes `c` for a probe where the rule above allows one now (false: not now). */
  takeForProbe(c: C): boolean;
  /** Sends the probe on `c` (taken); resolves with its answer. */
  probe(c: C, timeoutMs: number): Promise<Answer>;
}

interface Seen {
  uses: number;
  /** Looks in a row that saw no call or probe end on it. */
  idle: number;
  failures: number;
  /** Looks left before the next probe after a failure. */
  skip: number;
}

/** Looks at a client's kept connections every `idleMs / 2` and probes those the rule says are due. */
export class KeepWarm<C extends object> {
  private readonly timer: NodeJS.Timeout;
  private readonly first: NodeJS.Timeout;
  private readonly seen = new WeakMap<C, Seen>();
  private probing = false;
  private stopped = false;
  private readonly timeoutMs: number;

  constructor(
    private readonly conns: WarmConnections<C>,
    private readonly o: KeepWarmOptions,
  ) {
    this.timeoutMs = Math.max(o.idleMs, 1_000);
    this.timer = setInterval(() => this.look(), Math.max(1, Math.floor(o.idleMs / 2)));
    this.timer.unref();
    // Opened and proven at start, not at the first submission.
    this.first = setTimeout(() => this.look(), 0);
    this.first.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.first);
  }

  private look(): void {
    if (this.probing || this.stopped) return;
    for (const c of this.conns.kept(this.o.connections)) {
      let s = this.seen.get(c);
      if (s === undefined) this.seen.set(c, (s = { uses: -1, idle: 0, failures: 0, skip: 0 }));
      const uses = this.conns.uses(c);
      if (uses !== s.uses) {
        s.uses = uses;
        s.idle = 0;
      } else s.idle++;
      if (s.skip > 0) {
        s.skip--;
        continue;
      }
      const due = !this.conns.proven(c) || s.idle >= 2;
      if (!due || !this.conns.takeForProbe(c)) continue;
      this.probing = true;
      const seen = s;
      void this.conns.probe(c, this.timeoutMs).then((a) => {
        this.probing = false;
        if (a.kind === 'fault') {
          keepWarmProbes.failed++;
          seen.failures++;
          seen.skip = Math.min(2 ** seen.failures, 64);
        } else {
          keepWarmProbes.answered++;
          seen.failures = 0;
        }
      });
      return;
    }
  }
}
