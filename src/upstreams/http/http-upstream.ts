/**
 * An upstream over HTTP (http://, https://): keep-alive connections (http-connections.ts:
 * those that have answered are used first) and a JSON-RPC call over undici's `dispatch` (the cheapest client path measured:
 * no stream or promise machinery per request). Every call ends
 * in exactly one Answer: a JSON-RPC result, a JSON-RPC error, or a fault (transport error,
 * timeout, 5xx, non-JSON-RPC body) — the distinction the forwarding rules hinge on.
 *
 * A fault says whether the request was written (`sent`: its bytes were handed to the socket,
 * undici's `onRequestSent`): only then can the outcome be uncertain. Calls beyond the connections wait in a queue of ours, bounded in time
 * (`queueMs`): one that gets no connection in time ends unsent, and undici never sees it. The
 * answer timeout starts when undici writes the request (its `onConnect`), so it measures the
 * sequencer, never time spent waiting for a connection.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { KeepWarm } from '../keep-warm.js';
import { Queue } from '../queue.js';
import { type Answer, type CallTimes, classify, type KeepWarmOptions, noConnection, type Upstream, type UpstreamKind, upstreamLabel } from '../upstream.js';
import { type Conn, HttpConnections } from './http-connections.js';
import { httpWarm } from './http-warm.js';

const MAX_ANSWER_BYTES = 1 << 20;

interface Waiting {
  /** Waits for a connection that has answered before (while one exists) rather than a fresh one. */
  readonly proven: boolean;
  readonly run: (c: Conn) => void;
  /** Ends the wait unsent (the pool is closing). */
  readonly drop: (why: string) => void;
  readonly expire: NodeJS.Timeout;
  cancelled: boolean;
}

export class HttpUpstream implements Upstream {
  readonly label: string;
  /** The label as a JSON string, for log lines. */
  readonly labelJson: string;
  readonly conns: HttpConnections;
  private readonly path: string;
  private readonly headers: string[];
  private seq = 0;
  private readonly waiting = new Queue<Waiting>();
  private readonly warm: KeepWarm<Conn> | null;

  constructor(
    readonly url: string,
    connections: number,
    keepWarm?: KeepWarmOptions,
  ) {
    const u = new URL(url);
    this.label = upstreamLabel(url);
    this.labelJson = JSON.stringify(this.label);
    this.path = u.pathname + u.search;
    // A flat [name, value, …] array: undici walks it without an object key iteration per call.
    const headers = ['content-type', 'application/json'];
    if (u.username !== '' || u.password !== '')
      headers.push('authorization', 'Basic ' + Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64'));
    this.headers = headers;
    this.conns = new HttpConnections(u.origin, connections, {
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connect: { timeout: 2_000 },
    });
    this.warm = keepWarm !== undefined && keepWarm.idleMs > 0 ? new KeepWarm(httpWarm(this), keepWarm) : null;
  }

  /** Calls waiting for a connection (keep-warm sends no probe while one waits). */
  get queued(): number {
    return this.waiting.length;
  }

  /** A keep-warm probe, `eth_chainId` on `c` (taken by the caller): never queued, never moved to another connection. */
  probe(c: Conn, timeoutMs: number): Promise<Answer> {
    const body = `{"jsonrpc":"2.0","id":${++this.seq},"method":"eth_chainId","params":[]}`;
    return new Promise((resolve) => this.dispatch(c, body, { timeoutMs, queueMs: timeoutMs }, performance.now() + timeoutMs, resolve, false));
  }

  /** `{"jsonrpc":"2.0","id":N,"method":…,"params":…}` with params already serialized. */
  call(method: string, paramsJson: string, times: CallTimes): Promise<Answer> {
    const body = `{"jsonrpc":"2.0","id":${++this.seq},"method":"${method}","params":${paramsJson}}`;
    const deadline = performance.now() + times.queueMs;
    return new Promise<Answer>((resolve) => {
      const proven = times.proven === true;
      const c = this.conns.take(proven);
      if (c !== null) return this.dispatch(c, body, times, deadline, resolve);
      this.wait(body, times, deadline, resolve, proven);
    });
  }

  /** Queues a call for a connection until `deadline`; past it the call ends unsent. */
  private wait(body: string, times: CallTimes, deadline: number, resolve: (a: Answer) => void, proven: boolean): void {
    const w: Waiting = {
      cancelled: false,
      proven,
      run: (c) => this.dispatch(c, body, times, deadline, resolve),
      drop: (why) => resolve({ kind: 'fault', why, sent: false }),
      expire: setTimeout(
        () => {
          w.cancelled = true;
          resolve(noConnection(times));
        },
        Math.max(0, deadline - performance.now()),
      ),
    };
    this.waiting.push(w);
  }

  /** A call ended on `c`: the first waiting call (not expired) that can take a connection now takes one. */
  private release(c: Conn, answered: boolean): void {
    this.conns.give(c, answered);
    const { waiting } = this;
    for (let k = 0; k < waiting.length; k++) {
      const w = waiting.at(k)!;
      if (w.cancelled) continue;
      const next = this.conns.take(w.proven);
      // A call that waits for a proven connection lets the ones behind it take this one.
      if (next === null) continue;
      w.cancelled = true;
      clearTimeout(w.expire);
      w.run(next);
      break;
    }
    // The calls ended at the front (taken, expired) leave the queue; those behind a waiting one stay until it goes.
    while (waiting.peek()?.cancelled === true) waiting.shift();
  }

  /** `requeue`: a call lost unsent on a fresh connection waits for a proven one (a probe does not: it ends). */
  private dispatch(c: Conn, body: string, times: CallTimes, deadline: number, resolve: (a: Answer) => void, requeue = true): void {
    const wasProven = c.proven;
    let done = false;
    let sent = false;
    let ended = false;
    let status = 0;
    let chunks: Buffer[] = [];
    let size = 0;
    let abort: ((err?: Error) => void) | null = null;
    let timer: NodeJS.Timeout | undefined;
    const finish = (a: Answer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(a);
    };
    const end = (answered: boolean) => {
      if (ended) return;
      ended = true;
      // After an error the connection is handed on once undici has finished failing its queue
      // (a request dispatched to it from inside that loop trips undici's own assertion).
      if (answered) this.release(c, true);
      else queueMicrotask(() => this.release(c, false));
    };
    // undici's core speaks this handler interface natively (the newer onRequestStart/
    // onResponse* one is wrapped per request, parsing every header into an object): measured
    // cheaper per call, and the raw headers are never needed here.
    const handler = {
      onConnect(a: (err?: Error) => void) {
        abort = a;
        // Too late: the caller was told "not sent", so it must stay true.
        if (done) return a(new Error('no connection in time'));
        clearTimeout(timer);
        timer = setTimeout(() => {
          finish({ kind: 'fault', why: `timeout after ${times.timeoutMs} ms`, sent });
          abort?.(new Error('timeout'));
        }, times.timeoutMs);
      },
      // The request's bytes were handed to the socket: from here on the sequencer may have read
      // them, and a fault leaves the outcome to be resolved (never "not sent").
      onRequestSent() {
        sent = true;
      },
      onHeaders(statusCode: number) {
        status = statusCode;
        return true;
      },
      onData(chunk: Buffer) {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) {
          finish({ kind: 'fault', why: 'answer too large', sent: true });
          abort?.(new Error('answer too large'));
          return false;
        }
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
        chunks = [];
        finish(interpret(status, text));
        end(true);
      },
      onError: (err: Error) => {
        // A fresh connection lost before the request was written (closed at accept by a
        // sequencer at its connection limit, refused): nothing was sent, so the call waits for a
        // connection that has answered, where one exists, within its time for a connection.
        if (requeue && !done && !sent && !wasProven && this.conns.anyProven && performance.now() < deadline) {
          done = true;
          clearTimeout(timer);
          end(false);
          this.wait(body, times, deadline, resolve, true);
          return;
        }
        finish({ kind: 'fault', why: `transport: ${err.message}`, sent });
        end(false);
      },
    } as unknown as Dispatcher.DispatchHandler;
    try {
      c.client.dispatch({ path: this.path, method: 'POST', headers: this.headers, body }, handler);
    } catch (e) {
      finish({ kind: 'fault', why: `transport: ${(e as Error).message}`, sent: false });
      end(false);
      return;
    }
    // A kept-alive connection takes the request at once (onConnect ran inside dispatch, and the
    // answer's timeout is armed). Otherwise undici opens one: bounded by the time left to get a
    // connection, after which the call ends unsent.
    if (!sent && !done) timer = setTimeout(() => finish(noConnection(times)), Math.max(0, deadline - performance.now()));
  }

  /**
   * Closes the client: calls waiting for a connection end unsent; calls written are waited for
   * (`abandon` false), or cut (`abandon`: their answers no longer have anyone to go to, such as
   * sync calls already answered by the drain, which would otherwise hold the exit for their wait).
   */
  close(abandon = false): Promise<void> {
    this.warm?.stop();
    for (const w of this.waiting.clear()) {
      if (w.cancelled) continue;
      clearTimeout(w.expire);
      w.cancelled = true;
      w.drop('the sequencer client is closing'); // never written: definitely not forwarded
    }
    return this.conns.close(abandon);
  }
}

/** Classifies an HTTP answer: 5xx or a body that is not JSON-RPC is a fault. */
export function interpret(status: number, text: string): Answer {
  if (status >= 500) return { kind: 'fault', why: `HTTP ${status}`, sent: true };
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return { kind: 'fault', why: `HTTP ${status} with a non-JSON body`, sent: true };
  }
  return classify(msg, `HTTP ${status}`, status >= 200 && status < 300);
}

/** http:// and https:// upstreams. */
export const httpKind: UpstreamKind = {
  schemes: ['http:', 'https:'],
  open: (url, o) => new HttpUpstream(url, o.calls, o.keepWarm),
};
