/**
 * A development sequencer that serves `eth_sendRawTransactionConditional` (ERC-7796) in front of
 * an anvil, which serves no such method (`npm start -- --conditional`; the chain tests use it
 * too): each conditional call is checked as an OP Stack sequencer checks it (rules.ts), against
 * anvil's state, and, when every condition holds, published to anvil with
 * eth_sendRawTransaction (anvil mines it); every other request is passed to anvil as it came.
 *
 * For tests of what txgate does with what sequencers answer, `mode` makes it hold a
 * transaction unpublished, refuse, or not serve the method; and every call that carries a
 * transaction is recorded with its method, so a test sees whether a conditional transaction ever
 * reached the chain as a plain send. Loopback only; a body is read up to 1 MiB.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keccak } from 'hash-wasm';
import { CONDITIONAL_METHOD } from '../../rpc/rpc-methods.js';
import { type ChainRead, checkConditions, COST_EXCEEDED, CONDITIONS_REFUSED, MAX_COST, RpcError } from './rules.js';

export type SequencerMode =
  /** The conditions checked, then published to anvil. */
  | 'serve'
  /** The conditions checked, then answered with the hash and never published (a quote that stays out of every block). */
  | 'hold'
  /** -32003 whatever the conditions. */
  | 'refuse'
  /** -32005 whatever the conditions. */
  | 'limit'
  /** The method is not served: -32601 (a sequencer without the conditional API). */
  | 'unserved';

export interface SentCall {
  readonly method: string;
  readonly hash: `0x${string}`;
  readonly options?: unknown;
}

export interface ConditionalSequencer {
  readonly url: string;
  readonly port: number;
  mode: SequencerMode;
  /** Every call that carried a transaction, in order: its method and the transaction's hash. */
  readonly calls: SentCall[];
  /** The transactions held unpublished ('hold'). */
  readonly held: `0x${string}`[];
  close(): Promise<void>;
}

/** The largest request body read. */
const MAX_BODY = 1 << 20;

type RpcAnswer = { result?: unknown; error?: { code: number; message: string; data?: unknown } };

/** One JSON-RPC call to the chain at `url`: its answer as it came. */
async function ask(url: string, method: string, params: unknown[]): Promise<RpcAnswer> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  const a = (await r.json()) as unknown;
  if (typeof a !== 'object' || a === null) throw new RpcError(-32000, 'the chain answered something that is not JSON-RPC');
  return a as RpcAnswer;
}

/** The chain at `url` read for checkConditions: a result, or its error thrown (an RpcError). */
export function chainReader(url: string): ChainRead {
  return async (method, params) => {
    const a = await ask(url, method, params);
    if (a.error !== undefined) throw new RpcError(typeof a.error.code === 'number' ? a.error.code : -32000, String(a.error.message));
    return a.result;
  };
}

/** keccak-256 of a 0x-hex transaction: its hash. */
async function txHash(tx: string): Promise<`0x${string}`> {
  return `0x${await keccak(Buffer.from(tx.slice(2), 'hex'), 256)}`;
}

/** Starts the sequencer in front of the anvil at `anvilUrl`, on 127.0.0.1:`port` (0: any free port). */
export async function startConditionalSequencer(anvilUrl: string, opts: { port?: number } = {}): Promise<ConditionalSequencer> {
  const read = chainReader(anvilUrl);
  const conditional = async (tx: `0x${string}`, o: Record<string, unknown>): Promise<unknown> => {
    if (seq.mode === 'limit') throw new RpcError(COST_EXCEEDED, `conditional cost, ${MAX_COST + 1}, exceeded max: ${MAX_COST}`);
    if (seq.mode === 'refuse') throw new RpcError(CONDITIONS_REFUSED, 'failed state check: failed account storage root constraint');
    await checkConditions(read, o);
    if (seq.mode === 'hold') {
      seq.held.push(tx);
      return txHash(tx);
    }
    return read('eth_sendRawTransaction', [tx]);
  };

  const handle = async (text: string): Promise<{ status: number; body: string }> => {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }) };
    }
    const m = (typeof msg === 'object' && msg !== null && !Array.isArray(msg) ? msg : {}) as { id?: unknown; method?: unknown; params?: unknown };
    const id = m.id ?? null;
    const params = Array.isArray(m.params) ? (m.params as unknown[]) : [];
    const tx = typeof params[0] === 'string' && /^0x([0-9a-fA-F]{2})+$/.test(params[0]) ? (params[0] as `0x${string}`) : null;
    try {
      if (m.method === CONDITIONAL_METHOD) {
        if (tx !== null) seq.calls.push({ method: CONDITIONAL_METHOD, hash: await txHash(tx), options: params[1] });
        if (seq.mode === 'unserved') throw new RpcError(-32601, `the method ${CONDITIONAL_METHOD} does not exist/is not available`);
        const o = params[1];
        if (tx === null || typeof o !== 'object' || o === null || Array.isArray(o)) throw new RpcError(-32602, 'invalid argument');
        return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id, result: await conditional(tx, o as Record<string, unknown>) }) };
      }
      if (m.method === 'eth_sendRawTransaction' && tx !== null) seq.calls.push({ method: 'eth_sendRawTransaction', hash: await txHash(tx) });
      // Everything else, batches included, to anvil as it came.
      const r = await fetch(anvilUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text, signal: AbortSignal.timeout(10_000) });
      return { status: r.status, body: await r.text() };
    } catch (e) {
      const code = e instanceof RpcError ? e.code : -32000;
      const message = e instanceof RpcError ? e.message : `the chain could not be asked: ${(e as Error).message}`;
      return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }) };
    }
  };

  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'request body over 1 MiB' } }));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      if (res.headersSent) return;
      void handle(Buffer.concat(chunks).toString('utf8')).then(
        (a) => {
          if (res.destroyed) return;
          res.writeHead(a.status, { 'content-type': 'application/json' });
          res.end(a.body);
        },
        () => res.destroy(),
      );
    });
  };
  const server: Server = createServer(serve);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const seq: ConditionalSequencer = {
    url: `http://127.0.0.1:${port}`,
    port,
    mode: 'serve',
    calls: [],
    held: [],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return seq;
}
