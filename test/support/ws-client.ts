/**
 * A WebSocket transport client for tests: every answer kept in arrival order, `call` resolving with the
 * answer to its id; `open` an upgrade (opened, or refused with its HTTP status and body) and
 * `connected` one that must open; `statusSubscription` a connection subscribed to the statuses.
 */
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { eventually } from './harness.js';

export interface Answer {
  readonly id: unknown;
  readonly result?: unknown;
  readonly error?: { code: number; message: string; data: { reason: string; status: number; [k: string]: unknown } };
}

/** A test client: every answer kept in arrival order; `call` resolves with the answer to its id. */
export class Client {
  readonly answers: Answer[] = [];
  private readonly waiting = new Map<unknown, (a: Answer) => void>();
  readonly closed: Promise<{ code: number; reason: string }>;
  private seq = 0;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      const a = JSON.parse(d.toString()) as Answer;
      this.answers.push(a);
      this.waiting.get(a.id)?.(a);
      this.waiting.delete(a.id);
    });
    this.closed = new Promise((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));
  }

  call(method: string, params: unknown[] = [], id: number | string = ++this.seq): Promise<Answer> {
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /** The next answer whatever its id (for frames answered with id null). */
  next(): Promise<Answer> {
    const n = this.answers.length;
    return eventually(() => this.answers[n], 5_000) as Promise<Answer>;
  }
}

export type Opened = { kind: 'open'; client: Client } | { kind: 'refused'; status: number; body: { error: { data: { reason: string } } } | null };

export function open(port: number, key: string | null, host = 'localhost'): Promise<Opened> {
  const headers: Record<string, string> = { host };
  if (key !== null) headers['x-api-key'] = key;
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers, perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ kind: 'open', client: new Client(ws) }));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        ws.terminate();
        let body = null;
        try {
          body = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({ kind: 'refused', status: res.statusCode ?? 0, body });
      });
    });
    ws.once('error', (e) => reject(e));
  });
}

export async function connected(port: number, key: string, host?: string): Promise<Client> {
  const o = await open(port, key, host);
  assert.equal(o.kind, 'open', JSON.stringify(o));
  return (o as { client: Client }).client;
}

/** A status push (`txgate_subscribe` `transactionStatus`): its fields as sent. */
export type Pushed = Record<string, any>;

/**
 * A connection to the gate on `port` with `key`, subscribed to `transactionStatus` (id 1) once
 * its answer came: the statuses pushed to it so far (`pushed`), in arrival order.
 */
export async function statusSubscription(port: number, key: string): Promise<{ readonly ws: WebSocket; pushed(): Pushed[] }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { host: 'localhost', 'x-api-key': key }, perMessageDeflate: false });
  const frames: Pushed[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  ws.send('{"jsonrpc":"2.0","id":1,"method":"txgate_subscribe","params":["transactionStatus"]}');
  const sub = (await eventually(() => frames.find((f) => f.id === 1), 5_000))!.result as string;
  return { ws, pushed: () => frames.filter((f) => f.params?.subscription === sub).map((f) => f.params.result as Pushed) };
}
