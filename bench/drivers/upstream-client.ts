/**
 * Upstream client cost, measured apart from txgate: CPU µs per JSON-RPC call to the stub
 * sequencer (another process, on the other core) with undici Pool.dispatch (what the forwarder
 * uses), undici Pool.request, node:http, and a minimal net.Socket client (the floor), at
 * concurrency 1 and 16.
 * Usage: node upstream-client.js PORT [INDEX]  → prints RESULT {…}; with INDEX, only that client
 * (RESULT {} past the last): the load bench runs each in a fresh process, since clients measured
 * one after another in one process disturb each other's figures (heap, JIT state, timers).
 */
import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Pool } from 'undici';
import { interpret, HttpUpstream } from '../../src/upstreams/http/http-upstream.js';

const port = Number(process.argv[2] ?? 18200);
const raw =
  '0x02f86f82123780843b9aca0084b2d05e0082520894a0ee7a142d267c1f36714e4a8f75612f20a7972085e8d4a5100080c001a0' + 'ab'.repeat(32) + 'a0' + 'cd'.repeat(32);
const body = `{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["${raw}"]}`;
const seq = new HttpUpstream(`http://127.0.0.1:${port}`, 16);
const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 16 });
const agent = new Agent({ keepAlive: true, maxSockets: 16 });
const headers = { 'content-type': 'application/json' };

/**
 * The floor: a minimal keep-alive HTTP/1.1 client on net.Socket (one request in flight per
 * socket, Content-Length responses only). Not a product client: it shows what undici's
 * generality costs per call on this machine.
 */
class RawConn {
  private buf: Buffer | null = null;
  private waiting: ((s: string) => void) | null = null;
  private failed: ((e: Error) => void) | null = null;
  readonly sock: Socket;
  constructor() {
    this.sock = connect(port, '127.0.0.1');
    this.sock.setNoDelay(true);
    this.sock.on('close', () => this.failed?.(new Error('minimal client: connection closed')));
    this.sock.on('data', (d: Buffer) => {
      const b = this.buf === null ? d : Buffer.concat([this.buf, d]);
      const end = b.indexOf('\r\n\r\n');
      if (end < 0) return void (this.buf = b);
      // Header names are case-insensitive (uWS sends `Content-Length`).
      const m = /\r\ncontent-length: *(\d+)/i.exec(b.toString('latin1', 0, end));
      const len = m === null ? 0 : Number(m[1]);
      if (b.length < end + 4 + len) return void (this.buf = b);
      this.buf = null;
      const w = this.waiting!;
      this.waiting = null;
      w(b.toString('utf8', end + 4, end + 4 + len));
    });
  }
  call(req: string): Promise<string> {
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failed = reject;
      this.sock.write(req);
    });
  }
}
// Connected when its turn comes: the stub (uWS) closes connections idle for 10 s.
let rawIdle: RawConn[] | null = null;
const rawReq = `POST / HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
/** Classified like the forwarder's answers (JSON parsed); a non-result would void the figure. */
async function rawCall(): Promise<unknown> {
  rawIdle ??= Array.from({ length: 16 }, () => new RawConn());
  const c = rawIdle.pop()!;
  try {
    const a = interpret(200, await c.call(rawReq));
    if (a.kind !== 'result') throw new Error(`minimal client: unexpected answer ${JSON.stringify(a)}`);
    return a;
  } finally {
    rawIdle!.push(c);
  }
}

const clients: Record<string, () => Promise<unknown>> = {
  'undici Pool.dispatch (txgate forwarder)': () => seq.call('eth_sendRawTransaction', `["${raw}"]`, { timeoutMs: 5000, queueMs: 5000 }),
  'undici Pool.request': async () => (await pool.request({ path: '/', method: 'POST', headers, body })).body.text(),
  'net.Socket, minimal HTTP/1.1 (floor, not a product client)': rawCall,
  'node:http': () =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, method: 'POST', path: '/', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let s = '';
          res.on('data', (d) => (s += d));
          res.on('end', () => resolve(s));
        },
      );
      req.on('error', reject);
      req.end(body);
    }),
};

const out: Record<string, Record<string, number>> = {};
const only = process.argv[3] === undefined ? null : Number(process.argv[3]);
for (const [name, call] of Object.entries(clients).filter((_, i) => only === null || i === only)) {
  for (let i = 0; i < 2000; i++) await call(); // warm-up
  out[name] = {};
  for (const concurrency of [1, 16]) {
    const n = concurrency === 1 ? 10_000 : 30_000;
    let started = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (started < n) {
          started++;
          await call();
        }
      }),
    );
    const cpu = process.cpuUsage(c0);
    out[name][`cpuUs_c${concurrency}`] = Math.round(((cpu.user + cpu.system) / n) * 10) / 10;
    out[name][`callsPerSec_c${concurrency}`] = Math.round(n / ((performance.now() - t0) / 1000));
  }
}
await Promise.all([seq.close(), pool.close()]);
agent.destroy();
for (const c of (rawIdle as RawConn[] | null) ?? []) c.sock.destroy();
process.stdout.write(`RESULT ${JSON.stringify(out)}\n`);
