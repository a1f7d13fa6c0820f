/**
 * A proxy between txgate and a chain's RPC (anvil) for fault tests: forwards everything, and can
 * break the next submission one of two ways (its answer lost after the chain took it, or dropped
 * before the chain saw it); what the chain received is kept in order.
 */
import { createServer as createHttpServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Between txgate and anvil: forwards everything, and can break the next submission one of two ways. */
export class FaultProxy {
  /** What anvil received: the raw transactions, in order. */
  readonly forwarded: string[] = [];
  /** The next eth_sendRawTransaction: 'lose-answer' (anvil gets it, txgate never hears back), 'drop' (anvil never sees it). */
  next: 'lose-answer' | 'drop' | null = null;
  private readonly held: ServerResponse[] = [];
  private readonly server: Server;
  port = 0;

  constructor(private readonly upstream: string) {
    this.server = createHttpServer((req, res) => void this.handle(req, res));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    for (const r of this.held) r.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const c of req) body += c;
    const msg = JSON.parse(body) as { method: string; params: string[] };
    const fault = msg.method === 'eth_sendRawTransaction' ? this.next : null;
    if (fault !== null) this.next = null;
    if (fault === 'drop') {
      req.socket.destroy();
      return;
    }
    if (msg.method === 'eth_sendRawTransaction') this.forwarded.push(msg.params[0]!);
    const answer = await new Promise<string>((resolve, reject) => {
      const up = request(this.upstream, { method: 'POST', headers: { 'content-type': 'application/json' } }, (r) => {
        let text = '';
        r.on('data', (c) => (text += c));
        r.on('end', () => resolve(text));
      });
      up.on('error', reject);
      up.end(body);
    });
    if (fault === 'lose-answer') {
      this.held.push(res); // anvil took it; the answer never comes back
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
  }
}
