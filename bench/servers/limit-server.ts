/**
 * bench:limit's parts server: each irreducible part of a txgate scenario, alone, in one uWS
 * process measured by callgrind as txgate is. One port per (scenario, part); every port reads
 * the request's body (copied, as txgate does), does its one part, and writes the answer txgate
 * gave that scenario (its status, headers and body, captured by the bench). A part's cost is its
 * port's count less the transport's (the port that does nothing between reading and answering).
 *
 * The parts (docs/performance.md, "The hot path against its limit"):
 * - `transport`: the body read and the answer written, nothing between;
 * - `envelope`: the body's text parsed (JSON.parse) and, for a submission, its raw transaction
 *   to bytes;
 * - `lookup`: the X-Api-Key header's SHA-256 and one map read;
 * - `decode`: decode and signature check of the pool's next raw transaction (txgate's decoder,
 *   the lean 0x02 path, `crypto.signature: "curve"`, as the bench's txgate is configured);
 * - `floor`: of that, the native calls alone, on the same bytes: the transaction's keccak-256
 *   (its hash, as hex) and the curve check (libsecp256k1 parsing r as a compressed point's x),
 *   with r copied into the point as the decoder does: the decode part's floor, a part of it
 *   (not added to the sum);
 * - `forward`: the pool's next raw transaction to the scenario's stub sequencer, one frame on a
 *   kept-alive ws:// connection or one request over a kept-alive undici connection, its answer
 *   read and parsed, before the answer is written;
 * - `audit`: the log lines txgate wrote for the scenario, the same fields built by the project's
 *   FastLog into its LogSink (to /dev/null: a write's kernel side is not counted).
 *
 * Usage: node limit-server.js CONTROL_PORT. The bench POSTs the setup (JSON, `Setup` below) to
 * the control port; the parts' ports listen once it is read, and it answers `ok`.
 */
import { hash } from 'node:crypto';
import { openSync } from 'node:fs';
import { pino } from 'pino';
import { Client, type Dispatcher } from 'undici';
import type { HttpResponse, HttpRequest } from 'uWebSockets.js';
import WebSocket from 'ws';
import { FastLog } from '../../src/log/log-line.js';
import { LogSink } from '../../src/log/log-sink.js';
import { initCrypto, isCurvePoint, keccak256Hex, uws } from '../../src/base/native.js';
import { Items, splitItems } from '../../src/tx/rlp.js';
import { TxDecoder } from '../../src/tx/decoder.js';
import { onBody } from './uws-body.js';

export type Part = 'transport' | 'envelope' | 'lookup' | 'decode' | 'floor' | 'forward' | 'audit';

export interface PartSetup {
  readonly port: number;
  readonly part: Part;
  /** The answer txgate gave: status line, headers (name, value), body. */
  readonly status: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  /** decode, floor, forward: the raw transactions of the scenario's pool, in the order the bench sends them. */
  readonly raws?: readonly string[];
  readonly chainId?: number;
  /** forward: the stub sequencer's URL (ws:// or http://). */
  readonly sequencer?: string;
  /** lookup: the key hashes known (a hit or a miss as txgate's lookup). */
  readonly keyHashes?: readonly string[];
  /** audit: txgate's lines for one request, each its fields in order (without level, time, pid) and its msg. */
  readonly lines?: readonly { readonly fields: readonly (readonly [string, string | number | boolean])[]; readonly msg: string }[];
}

export interface Setup {
  readonly parts: readonly PartSetup[];
}

const [controlArg] = process.argv.slice(2);
await initCrypto();
const sink = new LogSink({ fd: openSync('/dev/null', 'a') });
const fast = new FastLog(pino({ base: { pid: process.pid } }, sink));
const POLICY = { txTypes: new Set([2]) };
const noop = () => undefined;

/** One request of the part: done() writes the answer. */
type Run = (req: { key: string }, body: Buffer, done: () => void) => void;

function partRun(p: PartSetup): Run | Promise<Run> {
  const raws = p.raws ?? [];
  let k = 0;
  switch (p.part) {
    case 'transport':
      return (_q, _b, done) => done();
    case 'envelope':
      return (_q, body, done) => {
        const m = JSON.parse(body.toString('utf8')) as { params?: unknown[] };
        const raw = m.params?.[0];
        if (typeof raw === 'string') Buffer.from(raw.substring(2), 'hex');
        done();
      };
    case 'lookup': {
      const known = new Map((p.keyHashes ?? []).map((h) => [h, h]));
      return (q, _b, done) => {
        known.get(hash('sha256', q.key, 'hex'));
        done();
      };
    }
    case 'decode': {
      const decoder = new TxDecoder(p.chainId ?? 4663, 'prague', { signature: 'curve' });
      const bytes = raws.map((r) => Buffer.from(r.substring(2), 'hex'));
      return (_q, _b, done) => {
        decoder.decode(bytes[k++ % bytes.length]!, POLICY);
        done();
      };
    }
    case 'floor': {
      // Where r lies in each transaction is read before the rounds (the decoder's walk is its own work, not the floor's).
      const bytes = raws.map((r) => Buffer.from(r.substring(2), 'hex'));
      const items = new Items(12);
      const rs = bytes.map((b) => {
        if (!splitItems(b, 1, items)) throw new Error('limit server: a pool transaction is not a 0x02 list');
        return [items.start[10]!, items.end[10]!] as const;
      });
      const point = new Uint8Array(33);
      return (_q, _b, done) => {
        const i = k++ % bytes.length;
        const b = bytes[i]!;
        const [rs0, re] = rs[i]!;
        keccak256Hex(b);
        point[0] = 2;
        const pad = 33 - (re - rs0);
        for (let j = 1; j < pad; j++) point[j] = 0;
        for (let j = rs0; j < re; j++) point[pad + j - rs0] = b[j]!;
        isCurvePoint(point);
        done();
      };
    }
    case 'forward':
      return p.sequencer!.startsWith('ws') ? wsForward(p.sequencer!, raws) : httpForward(p.sequencer!, raws);
    case 'audit': {
      const lines = p.lines ?? [];
      return (_q, _b, done) => {
        done();
        for (const l of lines) {
          const line = fast.line('info')!;
          for (const [key, v] of l.fields) typeof v === 'string' ? line.str(key, v) : line.json(key, v);
          line.end(l.msg);
        }
      };
    }
  }
}

/** One frame on a kept-alive connection (open before the first request), the answer matched by id and parsed. */
async function wsForward(url: string, raws: readonly string[]): Promise<Run> {
  const waiting = new Map<number, () => void>();
  let id = 0;
  let k = 0;
  const ws = new WebSocket(url, { perMessageDeflate: false });
  ws.on('message', (data: Buffer) => {
    const a = JSON.parse(data.toString('utf8')) as { id: number };
    const w = waiting.get(a.id);
    waiting.delete(a.id);
    w?.();
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.on('error', noop);
  return (_q, _b, done) => {
    const n = ++id;
    waiting.set(n, done);
    ws.send(Buffer.from(`{"jsonrpc":"2.0","id":${n},"method":"eth_sendRawTransaction","params":["${raws[k++ % raws.length]}"]}`), { binary: false });
  };
}

/** One request over a kept-alive undici connection (dispatch, one of 8 connections), its answer parsed. */
function httpForward(url: string, raws: readonly string[]): Run {
  const u = new URL(url);
  const free = Array.from({ length: 8 }, () => new Client(u.origin, { pipelining: 1, keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000 }));
  const queued: (() => void)[] = [];
  const headers = ['content-type', 'application/json'];
  let id = 0;
  let k = 0;
  const call = (c: Client, done: () => void) => {
    const chunks: Buffer[] = [];
    const handler = {
      onConnect: noop,
      onHeaders: () => true,
      onData(chunk: Buffer) {
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        JSON.parse(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
        free.push(c);
        queued.shift()?.();
        done();
      },
      onError() {
        free.push(c);
        done();
      },
    } as unknown as Dispatcher.DispatchHandler;
    c.dispatch(
      { path: '/', method: 'POST', headers, body: `{"jsonrpc":"2.0","id":${++id},"method":"eth_sendRawTransaction","params":["${raws[k++ % raws.length]}"]}` },
      handler,
    );
  };
  return (_q, _b, done) => {
    const c = free.pop();
    if (c !== undefined) call(c, done);
    else queued.push(() => call(free.pop()!, done));
  };
}

async function listenPart(p: PartSetup): Promise<void> {
  const run = await partRun(p);
  const headers = p.headers.map(([k, v]) => [k, v] as const);
  const answer = (res: HttpResponse) =>
    res.cork(() => {
      res.writeStatus(p.status);
      for (const [k, v] of headers) res.writeHeader(k, v);
      res.end(p.body);
    });
  return new Promise((resolve, reject) =>
    uws()
      .App()
      .post('/*', (res: HttpResponse, req: HttpRequest) => {
        const q = { key: p.part === 'lookup' ? req.getHeader('x-api-key') : '' };
        onBody(res, (body, aborted) => run(q, body, () => aborted() || answer(res)));
      })
      .listen('127.0.0.1', p.port, (s) => (s === false ? reject(new Error(`limit server: port ${p.port} is taken`)) : resolve())),
  );
}

uws()
  .App()
  .post('/setup', (res) =>
    onBody(res, (body) => {
      const setup = JSON.parse(body.toString('utf8')) as Setup;
      Promise.all(setup.parts.map(listenPart)).then(
        () => res.cork(() => res.end('ok')),
        (e: Error) => res.cork(() => res.writeStatus('500 Internal Server Error').end(e.message)),
      );
    }),
  )
  .listen('127.0.0.1', Number(controlArg ?? 18170), (s) => {
    if (s === false) process.exit(1);
    process.stdout.write('ready\n');
  });
