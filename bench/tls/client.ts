/**
 * bench:tls's client: requests on kept-alive connections or a new (TLS) connection each, every
 * answer read whole and its status checked, latencies in µs.
 */
import type { ChildProcess } from 'node:child_process';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';

/** A deployment the client sends to: its port, whether it speaks TLS, and the server processes that count for it. */
export interface Target {
  readonly name: 'plain' | 'txgate' | 'nginx';
  readonly port: number;
  readonly secure: boolean;
  /** The server processes whose instructions and CPU count for this deployment. */
  readonly procs: readonly [string, ChildProcess][];
}

export interface ClientSettings {
  /** Concurrent connections, one request in flight on each. */
  readonly connections: number;
  /** The CA the servers' certificate is checked against. */
  readonly ca: Buffer;
  /** The API key of the scenarios that authenticate. */
  readonly key: string;
}

const request = (body: string, key: string | undefined, close: boolean) =>
  `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${key !== undefined ? `X-Api-Key: ${key}\r\n` : ''}${close ? 'Connection: close\r\n' : ''}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

export type Sock = ReturnType<typeof netConnect>;
function open(t: Target, ca: Buffer): Promise<Sock> {
  return new Promise((resolve, reject) => {
    const o: ConnectionOptions & { noDelay: boolean } = { host: '127.0.0.1', port: t.port, servername: 'localhost', ca, noDelay: true };
    const s: Sock = t.secure ? tlsConnect(o, () => resolve(s)) : netConnect({ port: t.port, host: '127.0.0.1', noDelay: true }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Sends one request on `s` and resolves with its status when the whole answer is in. */
function exchange(s: Sock, text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString('latin1');
      const head = buf.indexOf('\r\n\r\n');
      if (head < 0) return;
      const len = Number(/content-length: *(\d+)/i.exec(buf.slice(0, head))?.[1] ?? 0);
      if (buf.length < head + 4 + len) return;
      s.off('data', onData);
      resolve(Number(buf.slice(9, 12)));
    };
    const onError = (e: Error) => {
      s.off('data', onData);
      reject(e);
    };
    s.on('data', onData);
    s.once('error', onError);
    s.write(text);
    s.once('data', () => s.off('error', onError));
  });
}

export interface Scenario {
  readonly name: string;
  readonly kept: boolean;
  readonly bodies: readonly string[];
  readonly auth: boolean;
}
/** The kept-alive connections of a round, opened (handshakes done) before it is measured. */
export function openAll(c: ClientSettings, t: Target, sc: Scenario): Promise<Sock[]> {
  return sc.kept ? Promise.all(Array.from({ length: c.connections }, () => open(t, c.ca))) : Promise.resolve([]);
}

/** One round: `n` requests over `connections` workers (on `kept`'s connections, kept-alive); latencies in µs. */
export async function runRound(c: ClientSettings, t: Target, sc: Scenario, n: number, kept?: Sock[]): Promise<number[]> {
  let next = 0;
  const lat: number[] = [];
  const socks = kept ?? (await openAll(c, t, sc));
  const worker = async (w: number) => {
    let s = sc.kept ? socks[w]! : null;
    for (;;) {
      const i = next++;
      if (i >= n) break;
      const text = request(sc.bodies[i % sc.bodies.length]!, sc.auth ? c.key : undefined, !sc.kept);
      const t0 = process.hrtime.bigint();
      if (!sc.kept) s = await open(t, c.ca);
      const status = await exchange(s!, text);
      lat.push(Number(process.hrtime.bigint() - t0) / 1000);
      if (status !== 200) throw new Error(`${t.name} ${sc.name}: status ${status}`);
      if (!sc.kept) s!.destroy();
    }
    if (kept === undefined) s?.destroy();
  };
  await Promise.all(Array.from({ length: c.connections }, (_, w) => worker(w)));
  return lat;
}
