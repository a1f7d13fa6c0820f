/**
 * One sequencer: a keep-alive undici Pool and a JSON-RPC call over `Pool.dispatch` (the
 * cheapest client path measured: no stream or promise machinery per request). Every call ends
 * in exactly one Answer: a JSON-RPC result, a JSON-RPC error, or a fault (transport error,
 * timeout, 5xx, non-JSON-RPC body) — the distinction the forwarding rules hinge on.
 */
import { Pool, type Dispatcher } from 'undici';
import { sequencerLabel } from '../config.js';

export type Answer =
  | { readonly kind: 'result'; readonly result: unknown }
  | { readonly kind: 'error'; readonly code: number; readonly message: string; readonly data: unknown }
  | { readonly kind: 'fault'; readonly why: string };

export type SequencerHealth = 'unknown' | 'up' | 'down';

const MAX_ANSWER_BYTES = 1 << 20;

export class Sequencer {
  readonly label: string;
  /** The label as a JSON string, for log lines. */
  readonly labelJson: string;
  private readonly pool: Pool;
  private readonly path: string;
  health: SequencerHealth = 'unknown';
  /** Why the last probe or call failed (no secrets: the label never has credentials). */
  lastProblem = '';
  private seq = 0;

  constructor(
    readonly url: string,
    connections: number,
  ) {
    const u = new URL(url);
    this.label = sequencerLabel(url);
    this.labelJson = JSON.stringify(this.label);
    this.path = u.pathname + u.search;
    // A flat [name, value, …] array: undici walks it without an object key iteration per call.
    const headers = ['content-type', 'application/json'];
    if (u.username !== '' || u.password !== '')
      headers.push('authorization', 'Basic ' + Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64'));
    this.headers = headers;
    this.pool = new Pool(u.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      connect: { timeout: 2_000 },
    });
  }

  private readonly headers: string[];

  get eligible(): boolean {
    return this.health !== 'down';
  }

  /** `{"jsonrpc":"2.0","id":N,"method":…,"params":…}` with params already serialized. */
  call(method: string, paramsJson: string, timeoutMs: number): Promise<Answer> {
    const body = `{"jsonrpc":"2.0","id":${++this.seq},"method":"${method}","params":${paramsJson}}`;
    return new Promise<Answer>((resolve) => {
      let done = false;
      let status = 0;
      let chunks: Buffer[] = [];
      let size = 0;
      const finish = (a: Answer) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(a);
      };
      let abort: ((err?: Error) => void) | null = null;
      const timer = setTimeout(() => {
        finish({ kind: 'fault', why: `timeout after ${timeoutMs} ms` });
        abort?.(new Error('timeout'));
      }, timeoutMs);
      // undici's core speaks this handler interface natively (the newer onRequestStart/
      // onResponse* one is wrapped per request, parsing every header into an object): measured
      // cheaper per call, and the raw headers are never needed here.
      const handler = {
        onConnect(a: (err?: Error) => void) {
          abort = a;
          if (done) a(new Error('timeout'));
        },
        onHeaders(statusCode: number) {
          status = statusCode;
          return true;
        },
        onData(chunk: Buffer) {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            finish({ kind: 'fault', why: 'answer too large' });
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
        },
        onError(err: Error) {
          finish({ kind: 'fault', why: `transport: ${err.message}` });
        },
      } as unknown as Dispatcher.DispatchHandler;
      try {
        this.pool.dispatch({ path: this.path, method: 'POST', headers: this.headers, body }, handler);
      } catch (e) {
        finish({ kind: 'fault', why: `transport: ${(e as Error).message}` });
      }
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}

/** Classifies an HTTP answer: 5xx or a body that is not JSON-RPC is a fault. */
export function interpret(status: number, text: string): Answer {
  if (status >= 500) return { kind: 'fault', why: `HTTP ${status}` };
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return { kind: 'fault', why: `HTTP ${status} with a non-JSON body` };
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return { kind: 'fault', why: `HTTP ${status} with a non-JSON-RPC body` };
  const m = msg as Record<string, unknown>;
  if ('error' in m && typeof m.error === 'object' && m.error !== null) {
    const e = m.error as Record<string, unknown>;
    if (typeof e.code === 'number' && typeof e.message === 'string') return { kind: 'error', code: e.code, message: e.message, data: e.data };
    return { kind: 'fault', why: `HTTP ${status} with a malformed JSON-RPC error` };
  }
  if ('result' in m && status >= 200 && status < 300) return { kind: 'result', result: m.result };
  return { kind: 'fault', why: `HTTP ${status} without a JSON-RPC result` };
}
