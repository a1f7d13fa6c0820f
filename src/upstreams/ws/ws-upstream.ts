/**
 * An upstream over persistent WebSockets (`ws://`/`wss://` URLs): a few connections
 * (`forward.wsConnections` for a sequencer), many calls in flight on each (at most
 * `forward.connections` for the sequencer), answers matched by id, pings, reconnect with
 * backoff. No HTTP head to write or parse per call. It is an Upstream like the HTTP one
 * (http/http-upstream.ts), and the outcome rules (forward/attempts.ts) are the same:
 * - a call is written when its frame is handed to the socket; before that (no connection open
 *   within `queueMs`, the connection lost first) it ends unsent;
 * - a connection lost with calls written on it ends each of them as a written fault (to be
 *   resolved by asking again: the hash, the same bytes), never "not sent";
 * - a frame that is not an answer to a call in flight (an unknown or repeated id, a
 *   notification, garbage, a batch) is counted and ignored; one over the size bound closes the
 *   connection (its written calls become written faults).
 *
 * Per call (measured by bench:instr, the valid submission to a ws:// sequencer): the frame is
 * built as one Buffer, which ws masks into a single write (a string would be copied to a Buffer
 * by ws anyway and written in two parts); the answer is parsed from ws's own buffer (no copy, no
 * second UTF-8 check: JSON.parse of the text is the check that matters); and calls with a
 * common answer bound (a whole number of ms, the first few seen: `forward.timeoutMs`) wait in
 * one queue per bound, in deadline order, under one timer instead of a timer each.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { ignoredFrames } from '../peer-frames.js';
import { Queue } from '../queue.js';
import { type Answer, type CallTimes, classify, type KeepWarmOptions, noConnection, type Upstream, type UpstreamKind, upstreamLabel } from '../upstream.js';
import { Deadlines } from './deadlines.js';
import { KeepWarm } from '../keep-warm.js';
import { wsWarm } from './ws-warm.js';
import { Backoff } from '../../base/backoff.js';

const MAX_ANSWER_BYTES = 1 << 20;
/** A ping every this often; a connection with no pong by the next ping is cut. */
const PING_MS = 10_000;

/** A text frame (a Buffer would otherwise go as binary), masked as a client's must be. */
const SEND = { binary: false } as const;

interface Pending {
  readonly resolve: (a: Answer) => void;
  /** Its own timer, for a call whose bound has no queue (null: in its bound's deadline queue). */
  readonly timer: NodeJS.Timeout | null;
  readonly conn: Conn;
  /** performance.now() after which it times out. */
  readonly deadline: number;
  readonly timeoutMs: number;
}

interface Waiting {
  readonly method: string;
  readonly paramsJson: string;
  readonly times: CallTimes;
  readonly resolve: (a: Answer) => void;
  readonly expire: NodeJS.Timeout;
  done: boolean;
}

/** One connection (a new one each time it is opened). */
interface Conn {
  ws: WebSocket;
  open: boolean;
  inFlight: number;
  alive: boolean;
  /** Answers matched on it (keep-warm.ts: proven once one came, idle while it stays). */
  uses: number;
}

export class WsUpstream implements Upstream {
  readonly label: string;
  readonly labelJson: string;
  readonly conns: Conn[] = [];
  readonly pending = new Map<number, Pending>();
  readonly waiting = new Queue<Waiting>();
  private readonly warm: KeepWarm<Conn> | null;
  private seq = 0;
  /** The connection chosen last (pick). */
  private last = -1;
  private closed = false;
  private readonly backoff = new Backoff();
  private readonly pinger: NodeJS.Timeout;
  /** A deadline queue per common answer bound (ms). */
  private readonly deadlines = new Deadlines(
    (id) => this.pending.get(id)?.deadline,
    (id) => this.expire(id),
  );

  constructor(
    readonly url: string,
    /** Calls in flight at once on all its connections. */
    readonly maxInFlight: number,
    /** How many connections to keep open. */
    conns = 2,
    keepWarm?: KeepWarmOptions,
  ) {
    this.label = upstreamLabel(url);
    this.labelJson = JSON.stringify(this.label);
    for (let i = 0; i < conns; i++) this.connect(i);
    this.pinger = setInterval(() => this.ping(), PING_MS);
    this.pinger.unref();
    this.warm = keepWarm !== undefined && keepWarm.idleMs > 0 ? new KeepWarm(wsWarm(this), keepWarm) : null;
  }

  call(method: string, paramsJson: string, times: CallTimes): Promise<Answer> {
    return new Promise<Answer>((resolve) => {
      if (this.closed) return resolve({ kind: 'fault', why: 'the sequencer client is closing', sent: false });
      const conn = this.pick();
      if (conn !== null) return this.write(conn, method, paramsJson, times, resolve);
      const w: Waiting = {
        method,
        paramsJson,
        times,
        resolve,
        done: false,
        expire: setTimeout(() => {
          w.done = true;
          resolve(noConnection(times));
        }, times.queueMs),
      };
      this.waiting.push(w);
    });
  }

  /**
   * The open connection with the fewest calls in flight, if the bound allows one more; ties go
   * round the connections from the one after the last chosen. (Ties to the first one put nearly
   * every call on connection 0 at a rate whose answers come back before the next call.)
   */
  private pick(): Conn | null {
    if (this.pending.size >= this.maxInFlight) return null;
    const n = this.conns.length;
    let best: Conn | null = null;
    let at = 0;
    for (let k = 1; k <= n; k++) {
      const i = (this.last + k) % n;
      const l = this.conns[i];
      // OPEN, not merely not yet closed: ws drops a frame sent while closing without a word.
      if (l?.open && l.ws.readyState === WebSocket.OPEN && (best === null || l.inFlight < best.inFlight)) {
        best = l;
        at = i;
      }
    }
    if (best !== null) this.last = at;
    return best;
  }

  write(conn: Conn, method: string, paramsJson: string, times: CallTimes, resolve: (a: Answer) => void): void {
    const id = ++this.seq;
    const ms = times.timeoutMs;
    const deadline = performance.now() + ms;
    const timer = this.deadlines.add(id, ms);
    this.pending.set(id, { resolve, timer, conn, deadline, timeoutMs: ms });
    conn.inFlight++;
    try {
      // Handed to the socket here (ws writes the frame at once on an open connection).
      conn.ws.send(Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${paramsJson}}`), SEND);
    } catch (e) {
      if (timer !== null) clearTimeout(timer);
      this.pending.delete(id); // its place in a deadline queue is passed over
      conn.inFlight--;
      resolve({ kind: 'fault', why: `transport: ${(e as Error).message}`, sent: false });
    }
  }

  /** A call in flight past its bound: a written fault. */
  private expire(id: number): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    p.conn.inFlight--;
    p.resolve({ kind: 'fault', why: `timeout after ${p.timeoutMs} ms`, sent: true });
    this.drainWaiting();
  }

  /** Calls waiting for a connection (or for room under the bound) take what is free now. */
  private drainWaiting(): void {
    for (let w = this.waiting.peek(); w !== undefined; w = this.waiting.peek()) {
      if (w.done) {
        this.waiting.shift();
        continue;
      }
      const conn = this.pick();
      if (conn === null) return;
      this.waiting.shift();
      w.done = true;
      clearTimeout(w.expire);
      this.write(conn, w.method, w.paramsJson, w.times, w.resolve);
    }
  }

  private connect(i: number): void {
    if (this.closed) return;
    let ws: WebSocket;
    try {
      // Answers are JSON.parse'd whatever their bytes: ws's own UTF-8 check would be a second pass.
      ws = new WebSocket(this.url, { perMessageDeflate: false, maxPayload: MAX_ANSWER_BYTES, handshakeTimeout: 2_000, skipUTF8Validation: true });
    } catch {
      this.again(i);
      return;
    }
    const conn: Conn = { ws, open: false, inFlight: 0, alive: true, uses: 0 };
    this.conns[i] = conn;
    ws.on('open', () => {
      conn.open = true;
      this.backoff.reset();
      this.drainWaiting();
    });
    ws.on('message', (data, isBinary) => this.frame(data, isBinary));
    ws.on('pong', () => {
      conn.alive = true;
    });
    // 'error' is followed by 'close'.
    ws.on('error', () => {});
    ws.on('close', () => this.lost(i, conn));
  }

  /** One frame: the answer to a call in flight, or ignored. Nothing in it may throw out of the listener. */
  private frame(data: WebSocket.RawData, isBinary: boolean): void {
    try {
      if (isBinary) {
        ignoredFrames.sequencer++;
        return;
      }
      // One Buffer (binaryType 'nodebuffer', one frame a message).
      const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : (data as Buffer).toString('utf8');
      let msg: unknown;
      try {
        msg = JSON.parse(text);
      } catch {
        ignoredFrames.sequencer++;
        return;
      }
      const id = typeof msg === 'object' && msg !== null && !Array.isArray(msg) ? (msg as { id?: unknown }).id : undefined;
      const p = typeof id === 'number' ? this.pending.get(id) : undefined;
      if (p === undefined) {
        ignoredFrames.sequencer++;
        return;
      }
      this.pending.delete(id as number);
      if (p.timer !== null) clearTimeout(p.timer);
      p.conn.inFlight--;
      p.conn.uses++;
      p.resolve(classify(msg, 'WebSocket frame'));
      this.drainWaiting();
    } catch {
      ignoredFrames.sequencer++;
    }
  }

  /** A connection is gone: every call written on it is a written fault; reopened after a pause. */
  private lost(i: number, conn: Conn): void {
    conn.open = false;
    for (const [id, p] of this.pending) {
      if (p.conn !== conn) continue;
      this.pending.delete(id);
      if (p.timer !== null) clearTimeout(p.timer);
      p.resolve({ kind: 'fault', why: 'transport: the WebSocket connection was lost', sent: true });
    }
    conn.inFlight = 0;
    this.drainWaiting();
    this.again(i);
  }

  private again(i: number): void {
    if (this.closed) return;
    const ms = this.backoff.next();
    setTimeout(() => this.connect(i), ms).unref();
  }

  private ping(): void {
    for (const l of this.conns) {
      if (l === undefined || !l.open) continue;
      if (!l.alive) {
        l.ws.terminate();
        continue;
      }
      l.alive = false;
      try {
        l.ws.ping();
      } catch {
        // closing
      }
    }
  }

  close(abandon = false): Promise<void> {
    this.closed = true;
    clearInterval(this.pinger);
    this.warm?.stop();
    const end = () => {
      for (const l of this.conns) l?.ws.terminate();
      this.deadlines.close();
    };
    for (const w of this.waiting.clear()) {
      if (w.done) continue;
      w.done = true;
      clearTimeout(w.expire);
      w.resolve({ kind: 'fault', why: 'the sequencer client is closing', sent: false });
    }
    if (abandon || this.pending.size === 0) {
      end();
      return Promise.resolve();
    }
    // Calls written are waited for (their timers bound it).
    return new Promise((resolve) => {
      const check = setInterval(() => {
        if (this.pending.size > 0) return;
        clearInterval(check);
        end();
        resolve();
      }, 10);
    });
  }
}

/** ws:// and wss:// upstreams: `calls` in flight at once on `sockets` connections. */
export const wsKind: UpstreamKind = {
  schemes: ['ws:', 'wss:'],
  open: (url, o) => new WsUpstream(url, o.calls, o.sockets, o.keepWarm),
};
