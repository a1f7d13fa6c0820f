/**
 * The chain RPC's client (`chains[].rpc`): the one client every reader of a chain's own RPC
 * uses (the forward's lookups, the sync send's receipts, tracking's blocks, receipts and
 * nonces, a status from the chain). JSON-RPC over HTTP on keep-alive connections of its own,
 * single calls and batches (a block's receipts or the nonces of many senders in one request),
 * each call or batch bounded in time and in answer size and cancelled by its caller's
 * `AbortSignal`. One failure model, the upstreams' `Answer`: a result, a JSON-RPC error, or a
 * fault with a reason in words. The chain RPC is a peer that may lie or stall: whatever comes
 * back (not JSON, not an array, ids missing or repeated, an error per call) is read into one
 * Answer per call; nothing it sends throws out of here. It is no sequencer: nothing marks it down.
 */
import { Pool } from 'undici';
import { interpret } from '../http/http-upstream.js';
import { type Answer, type CallTimes, classify, type Upstream, upstreamLabel } from '../upstream.js';

/** A block with 1,000 transactions is ~70 kB of hashes; receipts of a few hundred are a few MB. */
const MAX_ANSWER_BYTES = 32 << 20;

export interface RpcCall {
  readonly method: string;
  readonly params: readonly unknown[];
}

/** A call's bound, and the signal that cancels it (a watcher's abandoned pass, a head poll no reader wants). */
export interface RpcOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
}

export class ChainRpc implements Upstream {
  readonly label: string;
  readonly labelJson: string;
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;

  constructor(
    readonly url: string,
    connections = 4,
  ) {
    const u = new URL(url);
    this.label = upstreamLabel(url);
    this.labelJson = JSON.stringify(this.label);
    this.path = u.pathname + u.search;
    this.headers = { 'content-type': 'application/json' };
    if (u.username !== '' || u.password !== '')
      this.headers.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
    this.pool = new Pool(u.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000, connect: { timeout: 2_000 } });
  }

  /**
   * One call with its params already serialized (the `Upstream` shape: the forward's lookups, the
   * sync send, the head poll), bounded by `times` and cancelled by `signal` as `one` is.
   */
  async call(method: string, paramsJson: string, times: CallTimes, signal?: AbortSignal): Promise<Answer> {
    const body = `{"jsonrpc":"2.0","id":1,"method":"${method}","params":${paramsJson}}`;
    const got = await this.post(body, { timeoutMs: times.queueMs + times.timeoutMs, signal });
    return typeof got === 'string' ? fault(got) : interpret(got.status, got.text);
  }

  /** One call. */
  async one(method: string, params: readonly unknown[], o: RpcOptions): Promise<Answer> {
    const got = await this.post(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), o);
    return typeof got === 'string' ? fault(got) : interpret(got.status, got.text);
  }

  /** Many calls in one request (none: none sent); one Answer per call, in order. */
  async batch(calls: readonly RpcCall[], o: RpcOptions): Promise<Answer[]> {
    if (calls.length === 0) return [];
    const body = JSON.stringify(calls.map((c, i) => ({ jsonrpc: '2.0', id: i, method: c.method, params: c.params })));
    const got = await this.post(body, o);
    if (typeof got === 'string') return calls.map(() => fault(got));
    if (got.status < 200 || got.status >= 300) return calls.map(() => fault(`HTTP ${got.status}`));
    return readBatch(got.text, calls.length);
  }

  /** The answer's status and text, or why there is none (in words, never the URL). */
  private async post(body: string, o: RpcOptions): Promise<{ status: number; text: string } | string> {
    // AbortSignal.timeout takes whole milliseconds only (a caller's wait left is fractional).
    const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(o.timeoutMs)));
    const signal = o.signal === undefined ? timeout : AbortSignal.any([timeout, o.signal]);
    try {
      const r = await this.pool.request({ path: this.path, method: 'POST', headers: this.headers, body, signal });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of r.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) {
          r.body.destroy();
          return 'answer too large';
        }
        chunks.push(chunk);
      }
      return { status: r.statusCode, text: Buffer.concat(chunks).toString('utf8') };
    } catch (e) {
      if (o.signal?.aborted === true) return 'cancelled';
      if (timeout.aborted) return `timeout after ${o.timeoutMs} ms`;
      return `transport: ${e instanceof Error ? e.message.slice(0, 200) : 'failed'}`;
    }
  }

  close(): Promise<void> {
    return this.pool.close().catch(() => {});
  }
}

const fault = (why: string): Answer => ({ kind: 'fault', why, sent: true });

/** Why an Answer has no result, in words (a JSON-RPC error's message cut to 200 characters), for a problem line. */
export function failureText(a: Answer): string {
  if (a.kind === 'result') return 'answered';
  return a.kind === 'error' ? `error ${a.code}: ${a.message.slice(0, 200)}` : a.why;
}

/** A batch answer read into one Answer per call (by id; a single object answers every call with its error or fault). */
export function readBatch(text: string, n: number): Answer[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fill(n, fault('a non-JSON body'));
  }
  if (!Array.isArray(parsed)) {
    const a = classify(parsed, 'a batch answer', false);
    return fill(n, a.kind === 'error' ? a : fault('not a batch answer'));
  }
  const out: (Answer | undefined)[] = new Array(n).fill(undefined);
  for (const m of parsed) {
    if (typeof m !== 'object' || m === null) continue;
    const id = (m as { id?: unknown }).id;
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= n || out[id] !== undefined) continue;
    out[id] = classify(m, 'a batch answer');
  }
  return out.map((a) => a ?? fault('no answer for this call'));
}

function fill(n: number, a: Answer): Answer[] {
  return Array.from({ length: n }, () => a);
}
