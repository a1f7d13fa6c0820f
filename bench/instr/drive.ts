/**
 * bench:instr's load: a round of requests of a scenario, over HTTP (`connections` keep-alive
 * connections, one request in flight on each) or the WebSocket transport (one connection, as many
 * frames in flight), counted by the status of the answers.
 */
import { connect } from 'node:net';
import WebSocket from 'ws';
import { answers, PinnedConnections } from './pinned.js';
import { POOL, type Scenario } from './scenarios.js';

/** Answers counted in a round. */
export const answered = (statuses: Map<number, number>) => [...statuses.values()].reduce((a, b) => a + b, 0);

/** The i-th request of `s` (or `body` on its host and headers: a `settle` request, on `settleHost` where it names one). */
function requestText(s: Scenario, i: number, body?: string): string {
  const host = body !== undefined ? (s.settleHost ?? s.host) : s.host;
  body ??= s.body !== undefined ? s.body(i) : s.bodies[i % s.bodies.length]!;
  let h = `POST / HTTP/1.1\r\nHost: ${host ?? 'localhost'}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  for (const [k, v] of Object.entries(s.headers)) h += `${k}: ${v}\r\n`;
  return h + '\r\n' + body;
}

export class Driver {
  /** Where each long-pool scenario's next round starts. */
  private readonly cursor = new Map<string, number>();
  /** The WebSocket connections of the ws scenarios, by scenario: opened once, kept across rounds. */
  private readonly lanes = new Map<string, WebSocket>();

  /** With `pin`, the HTTP connections to that port are held on that worker thread (pinned.ts). */
  private readonly pinned: PinnedConnections | null;
  /**
   * With `pin` on a worker other than 0: one connection held on worker 0, the tracker's owner,
   * for a scenario's `settle` request (the serving worker's rounds hold only the scenario's requests).
   */
  private readonly owner: PinnedConnections | null;

  constructor(
    private readonly connections: number,
    pin?: { readonly port: number; readonly worker: number },
  ) {
    this.pinned = pin === undefined ? null : new PinnedConnections(pin.port, pin.worker, connections);
    this.owner = pin === undefined || pin.worker === 0 ? null : new PinnedConnections(pin.port, 0, 1);
  }

  /**
   * A round's requests over the scenario's transport; on connections held on one worker, then the
   * scenario's `settle` request (not counted among the answers; a status other than 200 is an error).
   */
  async drive(port: number, s: Scenario, n: number): Promise<Map<number, number>> {
    if (s.ws) return this.loadWs(s.port ?? port, s, n);
    const statuses = await this.load(s.port ?? port, s, n);
    if (s.settle !== undefined && this.owner?.port === (s.port ?? port)) {
      const last = (this.cursor.get(s.name) ?? n) - 1;
      const status = await this.owner.one(requestText(s, 0, s.settle(last)));
      if (status !== 200) throw new Error(`${s.name}: the round's settle request was answered ${status}`);
    }
    return statuses;
  }

  /** Before a round's count starts: the connections held on the pinned worker opened (and the owner's, for `settle`). */
  async prepare(port: number): Promise<void> {
    if (this.pinned?.port !== port) return;
    await this.pinned.prepare();
    await this.owner?.prepare();
  }

  /** Closes the WebSocket connections and the held ones (before their server stops). */
  closeLanes(): void {
    for (const ws of this.lanes.values()) ws.terminate();
    this.lanes.clear();
    this.pinned?.close();
    this.owner?.close();
  }

  /**
   * Sends `n` requests of `s`; resolves with the count of answers by status. A connection the
   * server closes is replaced (a request in flight on it is not counted: only answers are).
   */
  private load(port: number, s: Scenario, n: number): Promise<Map<number, number>> {
    const statuses = new Map<number, number>();
    // A scenario whose every request is new (`body`, or a pool longer than the common one) goes on where its last round stopped.
    const goesOn = s.body !== undefined || s.bodies.length > POOL;
    let next = goesOn ? (this.cursor.get(s.name) ?? 0) : 0;
    if (goesOn) this.cursor.set(s.name, next + n);
    n += next;
    if (this.pinned?.port === port) return this.pinned.load(next, n, (i) => requestText(s, i));
    const connection = () =>
      new Promise<void>((resolve, reject) => {
        const sock = connect(port, '127.0.0.1');
        sock.setNoDelay(true);
        const send = () => {
          if (next >= n) return void sock.end();
          sock.write(requestText(s, next++));
        };
        sock.on('connect', send);
        answers(sock, (status) => {
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          send();
        });
        sock.on('close', () => resolve());
        sock.on('error', reject);
      });
    const one = async () => {
      while (next < n) await connection();
    };
    return Promise.all(Array.from({ length: this.connections }, one)).then(() => statuses);
  }

  private async lane(port: number, s: Scenario): Promise<WebSocket> {
    const open = this.lanes.get(s.name);
    if (open !== undefined && open.readyState === WebSocket.OPEN) return open;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, {
      headers: { host: s.host ?? 'localhost', 'x-api-key': s.headers['x-api-key'] ?? '' },
      perMessageDeflate: false,
    });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('unexpected-response', (_q, r) => reject(new Error(`${s.name}: the upgrade was refused ${r.statusCode}`)));
      ws.once('error', reject);
    });
    this.lanes.set(s.name, ws);
    return ws;
  }

  /** Sends `n` frames of `s` on its connection, `connections` in flight; resolves with the count of answers by data.status. */
  private async loadWs(port: number, s: Scenario, n: number): Promise<Map<number, number>> {
    const ws = await this.lane(port, s);
    const statuses = new Map<number, number>();
    let sent = 0;
    let got = 0;
    return new Promise((resolve, reject) => {
      const send = () => {
        if (sent < n) ws.send(s.bodies[sent++ % s.bodies.length]!);
      };
      const onMessage = (d: Buffer) => {
        const a = JSON.parse(d.toString()) as { error?: { data?: { status?: number } } };
        const status = a.error === undefined ? 200 : (a.error.data?.status ?? 0);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (++got < n) return send();
        ws.off('message', onMessage);
        ws.off('close', onClose);
        resolve(statuses);
      };
      const onClose = (code: number) => reject(new Error(`${s.name}: the connection closed (${code}) after ${got} of ${n} answers`));
      ws.on('message', onMessage);
      ws.once('close', onClose);
      for (let i = 0; i < this.connections; i++) send();
    });
  }
}
