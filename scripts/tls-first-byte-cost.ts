/**
 * `node dist/scripts/tls-first-byte-cost.js [--requests N] [--connections N]`: what answering a
 * plain HTTP request on the TLS port would cost (docs/operations.md#tls). uWebSockets.js hands a
 * connection to its handlers only after BoringSSL's handshake, so telling a plain request from a
 * ClientHello by its first byte (0x16: a TLS handshake record) needs something in front of the
 * handshake: a process that reads the first byte of every connection and then relays every byte
 * of it (the byte-peeking proxy below, the cheapest such hop in Node: `net` sockets piped, no
 * parsing). This measures that hop against the same uWS TLS server reached directly, each in a
 * process of its own, the client in this one:
 *
 * - a keep-alive request's round trip (POST eth_chainId, sequential), and the CPU the proxy
 *   spends on it against the server's own;
 * - a new connection's handshake and first request (sequential), and the proxy's CPU on it;
 * - and that the proxy does answer plain HTTP with a 400 naming the mistake.
 *
 * Wall-clock figures on a shared host are noisy: each is a median of the samples, and the CPU
 * figures (process.cpuUsage of each process over the run) are the steadier ones.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as tcpConnect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import { readCommandLine } from '../src/cli-args.js';
import { makeDevTls } from '../src/dev/dev-tls.js';
import { uws } from '../src/base/native.js';

const BODY = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
const ANSWER = '{"jsonrpc":"2.0","id":1,"result":"0x1237"}';
const PLAIN_400 =
  'HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: 137\r\n\r\n' +
  '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"A plain HTTP request was sent to the HTTPS port","data":{"reason":"bad_framing"}}}';

type Role = { role: 'server'; cert: string; key: string } | { role: 'proxy'; target: number };

/** A child: the uWS TLS server, or the byte-peeking proxy; says its port, then its CPU on request. */
function child(r: Role): void {
  const cpu0 = process.cpuUsage();
  process.on('message', (m: unknown) => {
    if (m === 'cpu') {
      const c = process.cpuUsage(cpu0);
      process.send!({ cpu: c.user + c.system });
    } else if (m === 'reset') {
      Object.assign(cpu0, process.cpuUsage());
      process.send!({ reset: true });
    } else if (m === 'stop') process.exit(0);
  });
  if (r.role === 'server') {
    const app = uws().SSLApp({ cert_file_name: r.cert, key_file_name: r.key });
    app.post('/', (res) => {
      res.onAborted(() => {});
      res.onData((_chunk, last) => {
        if (last) res.cork(() => res.writeHeader('content-type', 'application/json').end(ANSWER));
      });
    });
    app.listen('127.0.0.1', 0, (sock) => {
      if (sock === false) throw new Error('the uWS TLS server could not listen');
      process.send!({ port: uws().us_socket_local_port(sock as never) });
    });
    return;
  }
  const server = createServer((s: Socket) => {
    s.once('data', (first: Buffer) => {
      if (first[0] !== 0x16) {
        // Not a TLS handshake record: a plain request on the TLS port, answered in plain HTTP.
        s.end(PLAIN_400);
        return;
      }
      const up = tcpConnect({ host: '127.0.0.1', port: r.target, noDelay: true });
      up.write(first);
      s.pipe(up).pipe(s);
      const done = () => {
        s.destroy();
        up.destroy();
      };
      s.on('error', done).on('close', done);
      up.on('error', done).on('close', done);
    });
    s.setNoDelay(true);
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
}

function start(r: Role): Promise<{ proc: ChildProcess; port: number }> {
  const proc = fork(import.meta.filename, ['--child', JSON.stringify(r)], { stdio: 'inherit' });
  return new Promise((resolve) => proc.once('message', (m) => resolve({ proc, port: (m as { port: number }).port })));
}

function ask<T>(proc: ChildProcess, what: string): Promise<T> {
  return new Promise((resolve) => {
    proc.once('message', (m) => resolve(m as T));
    proc.send(what);
  });
}

const REQUEST = `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`;

function tlsOpen(port: number, ca: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca }, () => resolve(s));
    s.setNoDelay(true);
    s.once('error', reject);
  });
}

/** One request on an open TLS socket: resolves when the whole answer is in. */
function roundTrip(s: TLSSocket): Promise<void> {
  return new Promise((resolve) => {
    let got = '';
    const onData = (c: Buffer) => {
      got += c.toString('latin1');
      if (got.includes(ANSWER)) {
        s.off('data', onData);
        resolve();
      }
    };
    s.on('data', onData);
    s.write(REQUEST);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!;

async function keepAlive(port: number, ca: string, n: number): Promise<number[]> {
  const s = await tlsOpen(port, ca);
  const out: number[] = [];
  for (let i = 0; i < n + 200; i++) {
    const t0 = performance.now();
    await roundTrip(s);
    if (i >= 200) out.push((performance.now() - t0) * 1000);
  }
  s.destroy();
  return out;
}

async function fresh(port: number, ca: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n + 20; i++) {
    const t0 = performance.now();
    const s = await tlsOpen(port, ca);
    await roundTrip(s);
    if (i >= 20) out.push((performance.now() - t0) * 1000);
    s.destroy();
  }
  return out;
}

function plainAnswer(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = tcpConnect({ host: '127.0.0.1', port }, () => s.write(REQUEST));
    let got = '';
    s.on('data', (c) => (got += c.toString()));
    s.on('close', () => resolve(got));
    s.on('error', () => resolve(got));
  });
}

async function main(): Promise<void> {
  const { values } = readCommandLine({
    requests: { type: 'string', default: '5000' },
    connections: { type: 'string', default: '500' },
    child: { type: 'string' },
  });
  if (values.child !== undefined) return child(JSON.parse(values.child) as Role);
  const requests = Number(values.requests);
  const connections = Number(values.connections);
  const dir = mkdtempSync(join(tmpdir(), 'txgate-first-byte-'));
  try {
    const tls = makeDevTls(dir);
    const ca = readFileSync(tls.caFile, 'utf8');
    const server = await start({ role: 'server', cert: tls.certFile, key: tls.keyFile });
    const proxy = await start({ role: 'proxy', target: server.port });
    const cpu = async () => ({ server: (await ask<{ cpu: number }>(server.proc, 'cpu')).cpu, proxy: (await ask<{ cpu: number }>(proxy.proc, 'cpu')).cpu });
    const reset = async () => {
      await ask(server.proc, 'reset');
      await ask(proxy.proc, 'reset');
    };
    const rows: string[] = [];
    for (const [name, run, n] of [
      ['keep-alive request', keepAlive, requests],
      ['new connection (handshake + 1 request)', fresh, connections],
    ] as const) {
      await reset();
      const direct = await run(server.port, ca, n);
      const d = await cpu();
      await reset();
      const via = await run(proxy.port, ca, n);
      const v = await cpu();
      rows.push(
        `| ${name} | ${median(direct).toFixed(0)} / ${p99(direct).toFixed(0)} µs | ${median(via).toFixed(0)} / ${p99(via).toFixed(0)} µs | ` +
          `+${(median(via) - median(direct)).toFixed(0)} µs (${(median(via) / median(direct)).toFixed(2)}x) | ` +
          `${(d.server / n).toFixed(1)} µs | ${(v.proxy / n).toFixed(1)} µs (${(v.proxy / v.server).toFixed(2)}x the server's ${(v.server / n).toFixed(1)} µs) |`,
      );
    }
    const plain = await plainAnswer(proxy.port);
    console.log(
      `${requests} keep-alive requests, ${connections} new connections, sequential; ${new Date().toISOString().slice(0, 10)}, node ${process.version}\n`,
    );
    console.log(
      '| measured | direct p50 / p99 | through the first-byte proxy p50 / p99 | added at p50 | server CPU per request, direct | proxy CPU per request |',
    );
    console.log('|---|---|---|---|---|---|');
    for (const r of rows) console.log(r);
    console.log(`\nplain HTTP to the proxy: ${plain.split('\r\n')[0]}`);
    for (const p of [server.proc, proxy.proc]) p.send('stop');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
