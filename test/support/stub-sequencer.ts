/**
 * A stub sequencer (node:http) for isolating faults: each eth_sendRawTransaction is answered by
 * a programmable behaviour; eth_chainId answers the configured chain; every call is recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keccak256 } from '../../src/base/native.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

export interface Call {
  readonly method: string;
  readonly params: unknown[];
  /** The request's Authorization and Content-Type headers ('' when absent). */
  readonly authorization: string;
  readonly contentType: string;
}

export type Behaviour =
  | { kind: 'accept' } // result = keccak(raw)
  | { kind: 'result'; result: unknown }
  | { kind: 'error'; code: number; message: string }
  | { kind: 'http'; status: number; body: string; contentType?: string }
  | { kind: 'hang' }
  | { kind: 'destroy' };

/** keccak-256 of the raw bytes (initCrypto() must have been awaited: the harness does). */
export function txHash(rawHex: string): string {
  return '0x' + Buffer.from(keccak256(Buffer.from(rawHex.slice(2), 'hex'))).toString('hex');
}

export class StubSequencer {
  readonly calls: Call[] = [];
  behaviour: (call: Call) => Behaviour = () => ({ kind: 'accept' });
  delayMs = 0;
  /** A delay per call (beside delayMs): answers that overtake each other. */
  delayOf: ((call: Call) => number) | null = null;
  /** Where set, every eth_sendRawTransaction waits for it before its answer (a forward held in flight). */
  hold: Promise<void> | null = null;
  /** Delay of the eth_chainId answer (the health probe's). */
  chainIdDelayMs = 0;
  chainIdHex: string;
  /** Answer to eth_getTransactionByHash (null = unknown). */
  knownTx: (hash: string) => unknown = () => null;
  /** eth_getTransactionByHash answers HTTP 500 instead. */
  lookupFails = false;
  /** eth_getTransactionByHash answered by a behaviour of its own (garbage, errors, hangs), where set. */
  lookupBehaviour: ((call: Call) => Behaviour) | null = null;
  /** eth_chainId (the health probe) answered by a behaviour of its own, where set. */
  chainIdBehaviour: ((call: Call) => Behaviour) | null = null;
  private server: Server;
  private hanging: ServerResponse[] = [];
  port = 0;

  constructor(chainId = DEV_CHAIN_ID) {
    this.chainIdHex = '0x' + chainId.toString(16);
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 60_000;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  sends(): Call[] {
    return this.calls.filter((c) => c.method === 'eth_sendRawTransaction');
  }

  async start(port = 0): Promise<this> {
    await new Promise<void>((r) => this.server.listen(port, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    for (const r of this.hanging) r.destroy();
    this.hanging = [];
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    for await (const c of req) text += c;
    const msg = JSON.parse(text) as { id: unknown; method: string; params: unknown[] };
    const call = { method: msg.method, params: msg.params, authorization: req.headers.authorization ?? '', contentType: req.headers['content-type'] ?? '' };
    this.calls.push(call);
    const reply = (status: number, body: string, ct = 'application/json') => {
      res.writeHead(status, { 'content-type': ct });
      res.end(body);
    };
    const ok = (result: unknown) => reply(200, JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    // A path /chain<N> makes this stub a sequencer of chain N (one stub serves several chains).
    const chainPath = /^\/chain(\d+)/.exec(req.url ?? '');
    const own = msg.method === 'eth_chainId' ? this.chainIdBehaviour : msg.method === 'eth_getTransactionByHash' ? this.lookupBehaviour : null;
    if (own !== null) return this.answer(own(call), msg.id, txHash(String(msg.params?.[0] ?? '0x')), req, res);
    if (msg.method === 'eth_chainId') {
      if (this.chainIdDelayMs > 0) await new Promise((r) => setTimeout(r, this.chainIdDelayMs));
      return ok(chainPath !== null ? '0x' + Number(chainPath[1]).toString(16) : this.chainIdHex);
    }
    if (msg.method === 'eth_getTransactionByHash') {
      if (this.lookupFails) return reply(500, 'lookup failed', 'text/plain');
      const t = this.knownTx(String(msg.params[0]));
      return ok(t);
    }
    const b = this.behaviour(call);
    const delay = this.delayMs + (this.delayOf?.(call) ?? 0);
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    if (this.hold !== null) await this.hold;
    return this.answer(b, msg.id, txHash(String(msg.params[0])), req, res);
  }

  private answer(b: Behaviour, id: unknown, hash: string, req: IncomingMessage, res: ServerResponse): void {
    const reply = (status: number, body: string, ct = 'application/json') => {
      res.writeHead(status, { 'content-type': ct });
      res.end(body);
    };
    const ok = (result: unknown) => reply(200, JSON.stringify({ jsonrpc: '2.0', id, result }));
    switch (b.kind) {
      case 'accept':
        ok(hash);
        return;
      case 'result':
        ok(b.result);
        return;
      case 'error':
        reply(200, JSON.stringify({ jsonrpc: '2.0', id, error: { code: b.code, message: b.message } }));
        return;
      case 'http':
        reply(b.status, b.body, b.contentType ?? 'application/json');
        return;
      case 'hang':
        this.hanging.push(res);
        return;
      case 'destroy':
        req.socket.destroy();
        return;
    }
  }
}
