/**
 * The two paths a conditional submission takes into a gate, as one call: POST / and the
 * WebSocket transport (one connection per key, opened on first use). Each gives the JSON-RPC answer
 * and, for HTTP, its status (the lane carries it as `data.status` on errors).
 */
import WebSocket from 'ws';
import { rpc } from './http.js';

export type Via = 'http' | 'ws';

export interface Answer {
  readonly status: number;
  readonly result?: unknown;
  readonly error?: { code: number; message: string; data: { reason: string; [k: string]: unknown } };
}

export class Calls {
  private readonly sockets = new Map<string, Promise<{ ws: WebSocket; waiting: Map<number, (a: Answer) => void> }>>();
  private id = 0;
  /** Every status pushed on the lane (txgate_subscription), in arrival order. */
  readonly pushed: { status: string; hash: string; expiredBy: unknown }[] = [];

  constructor(private readonly port: () => number) {}

  async call(via: Via, key: string, method: string, params: unknown[]): Promise<Answer> {
    if (via === 'http') {
      const r = await rpc(this.port(), method, params, { key });
      return { status: r.status, ...(r.json as object) } as Answer;
    }
    const s = await this.socket(key);
    const id = ++this.id;
    return new Promise((resolve) => {
      s.waiting.set(id, resolve);
      s.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  private socket(key: string) {
    let s = this.sockets.get(key);
    if (s === undefined) {
      s = new Promise((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${this.port()}/`, { headers: { host: 'localhost', 'x-api-key': key }, perMessageDeflate: false });
        const waiting = new Map<number, (a: Answer) => void>();
        ws.on('message', (d) => {
          const a = JSON.parse(d.toString()) as Answer & {
            id: number;
            method?: string;
            params?: { result: { status: string; hash: string; expiredBy: unknown } };
          };
          if (a.method === 'txgate_subscription') {
            this.pushed.push(a.params!.result);
            return;
          }
          const status = a.error === undefined ? 200 : ((a.error.data as { status?: number }).status ?? 0);
          waiting.get(a.id)?.({ ...a, status });
          waiting.delete(a.id);
        });
        ws.once('open', () => resolve({ ws, waiting }));
        ws.once('error', reject);
      });
      this.sockets.set(key, s);
    }
    return s;
  }

  close(): void {
    for (const s of this.sockets.values()) void s.then((x) => x.ws.close());
    this.sockets.clear();
  }
}
