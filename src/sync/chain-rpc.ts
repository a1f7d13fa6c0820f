/**
 * The chain's own RPC (`chains[].rpc`), for what the sync send's `receipt` mode reads of it:
 * receipts. Keep-alive connections of its own (never the sequencers'), one JSON-RPC call per
 * request, answers classified as the sequencers' are (a fault, an error, or a result).
 */
import { Pool } from 'undici';
import { interpret, type Answer } from '../forward/upstream.js';

export class ChainRpc {
  private readonly pool: Pool;
  private readonly path: string;
  private seq = 0;

  constructor(url: string, connections: number) {
    const u = new URL(url);
    this.path = u.pathname + u.search;
    this.pool = new Pool(u.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000, connect: { timeout: 2_000 } });
  }

  /** One call, bounded by `timeoutMs` from its start; never throws. */
  async call(method: string, paramsJson: string, timeoutMs: number): Promise<Answer> {
    const body = `{"jsonrpc":"2.0","id":${++this.seq},"method":"${method}","params":${paramsJson}}`;
    try {
      const res = await this.pool.request({
        method: 'POST',
        path: this.path,
        headers: { 'content-type': 'application/json' },
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      return interpret(res.statusCode, await res.body.text());
    } catch (e) {
      return { kind: 'fault', why: `chain rpc: ${(e as Error).message}`, sent: true };
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
