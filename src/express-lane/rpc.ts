/**
 * A small JSON-RPC caller for the express lane's reads of the auction (and `ExpressLane.send`'s
 * endpoint calls; the service sends submissions through its upstream, forward/express-send.ts): one request, a bounded
 * time and a bounded answer. A peer that stalls, closes, answers garbage or answers too much is
 * an `RpcFailure` with a short reason in words (never the peer's text unbounded, never a crash).
 * URLs are never put in a reason whole: a credential in one stays out of logs and errors.
 */
import { Agent, request } from 'undici';

/** Why a call has no answer: `timeout`, `closed`, `http <status>`, `garbage`, `too large`, or the peer's JSON-RPC error. */
export class RpcFailure extends Error {
  constructor(
    readonly reason: string,
    /** The JSON-RPC error object where the peer answered one (its message cut to 300 characters). */
    readonly rpcError?: { readonly code: number | null; readonly message: string },
  ) {
    super(reason);
    this.name = 'RpcFailure';
  }
}

/** The largest answer read (an eth_getLogs page of a few hundred logs fits many times over). */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** scheme://host:port of a URL: what a log line or an error may say of it. */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(an invalid URL)';
  }
}

export interface RpcCaller {
  /** The `result` of `method(params)`, or a rejection with an RpcFailure. */
  call(method: string, params: readonly unknown[], timeoutMs: number): Promise<unknown>;
  /** The answer's text as the peer sent it (the express lane's endpoint: its reader decides), or an RpcFailure. */
  callText(method: string, paramsJson: string, timeoutMs: number): Promise<string>;
  close(): Promise<void>;
}

/** A caller of `url` on its own connections (a few, kept alive). */
export function rpcCaller(url: string, connections = 4): RpcCaller {
  const agent = new Agent({ connections, maxResponseSize: MAX_ANSWER_BYTES, keepAliveTimeout: 10_000 });
  let id = 0;
  const send = async (body: string, timeoutMs: number): Promise<string> => {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const r = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher: agent, signal });
      const text = await r.body.text();
      if (r.statusCode !== 200) throw new RpcFailure(`http ${r.statusCode}`);
      return text;
    } catch (e) {
      if (e instanceof RpcFailure) throw e;
      const code = (e as { code?: unknown }).code;
      if (signal.aborted) throw new RpcFailure('timeout');
      if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') throw new RpcFailure('too large');
      throw new RpcFailure('closed');
    }
  };
  return {
    async call(method, params, timeoutMs) {
      const text = await send(JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }), timeoutMs);
      return resultOf(text);
    },
    callText(method, paramsJson, timeoutMs) {
      return send(`{"jsonrpc":"2.0","id":${++id},"method":${JSON.stringify(method)},"params":${paramsJson}}`, timeoutMs);
    },
    close: () => agent.close(),
  };
}

/** The `result` of a JSON-RPC answer's text, or an RpcFailure (garbage, or the peer's error). */
export function resultOf(text: string): unknown {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new RpcFailure('garbage');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new RpcFailure('garbage');
  const o = v as { result?: unknown; error?: unknown };
  if (o.error !== undefined && o.error !== null) {
    const err = o.error as { code?: unknown; message?: unknown };
    const code = typeof err.code === 'number' && Number.isInteger(err.code) ? err.code : null;
    const message = typeof err.message === 'string' ? err.message.slice(0, 300) : '';
    throw new RpcFailure(`error ${code ?? '?'}`, { code, message });
  }
  if (!('result' in o)) throw new RpcFailure('garbage');
  return o.result;
}
