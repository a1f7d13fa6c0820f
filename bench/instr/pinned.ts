/**
 * bench:instr's connections held on one worker thread of a txgate that has several (--workers,
 * --worker). SO_REUSEPORT spreads new connections over the threads by their addresses, so
 * connections are opened, each asked GET /health, and kept where the answer's x-request-id names
 * the worker (`w<index>.`), the others closed: new ones for every round, before its count starts
 * (Driver.prepare; a connection idle between rounds would be closed by the server). A round's
 * requests then go over the held connections; an answer from another worker is counted under
 * status 0 (the round measured something else, and is measured again).
 */
import { connect, type Socket } from 'node:net';

/** Reads whole HTTP answers off a socket, calling `on` with each one's status and head; returns the way to stop. */
export function answers(sock: Socket, on: (status: number, head: string) => void): () => void {
  let buf: Buffer = Buffer.alloc(0);
  const onData = (d: Buffer) => {
    buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      const len = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buf.length < end + 4 + len) return;
      buf = buf.subarray(end + 4 + len);
      on(Number(head.slice(9, 12)), head);
    }
  };
  sock.on('data', onData);
  return () => sock.off('data', onData);
}

/** The worker thread that answered (its index in the x-request-id), or -1. */
const workerOf = (head: string) => Number(/\r\nx-request-id: *w(\d+)\./i.exec(head)?.[1] ?? -1);

export class PinnedConnections {
  private readonly held = new Set<Socket>();
  /** Opened for the next round (prepare), not used yet. */
  private fresh = false;

  constructor(
    readonly port: number,
    readonly worker: number,
    private readonly connections: number,
  ) {}

  /** One new connection, and the worker its GET /health was answered by (null: refused or closed). */
  private probe(): Promise<{ sock: Socket; worker: number } | null> {
    return new Promise((resolve) => {
      const sock = connect(this.port, '127.0.0.1');
      sock.setNoDelay(true);
      const off = answers(sock, (_status, head) => {
        off();
        sock.off('close', gone);
        resolve({ sock, worker: workerOf(head) });
      });
      const gone = () => resolve(null);
      sock.once('close', gone);
      sock.on('error', () => sock.destroy());
      sock.on('connect', () => sock.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n'));
    });
  }

  /** New connections, until `connections` are held on the worker. */
  async prepare(): Promise<void> {
    this.close();
    /** Answers by the worker named (-1: none named, null: closed unanswered), for the error. */
    const seen = new Map<number | null, number>();
    for (let tries = 0; this.held.size < this.connections; ) {
      const need = this.connections - this.held.size;
      if (tries > 64 * this.connections)
        throw new Error(
          `${this.held.size} of ${this.connections} connections landed on worker ${this.worker} in ${tries} tries (answered by worker: ${JSON.stringify([...seen])})`,
        );
      tries += need;
      for (const got of await Promise.all(Array.from({ length: need }, () => this.probe()))) {
        seen.set(got?.worker ?? null, (seen.get(got?.worker ?? null) ?? 0) + 1);
        if (got === null) continue;
        if (got.worker !== this.worker) {
          got.sock.destroy();
          continue;
        }
        this.held.add(got.sock);
        got.sock.once('close', () => this.held.delete(got.sock));
      }
    }
    this.fresh = true;
  }

  /** Requests `first` to `end` (exclusive) of the round, `text(i)` each, over the held connections; the answers by status. */
  async load(first: number, end: number, text: (i: number) => string): Promise<Map<number, number>> {
    if (!this.fresh) await this.prepare();
    this.fresh = false;
    const statuses = new Map<number, number>();
    let next = first;
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    await Promise.all(
      [...this.held].map(
        (sock) =>
          new Promise<void>((resolve) => {
            const finish = () => {
              off();
              sock.off('close', finish);
              resolve();
            };
            const send = () => (next >= end ? finish() : sock.write(text(next++)));
            const off = answers(sock, (status, head) => {
              count(workerOf(head) === this.worker ? status : 0);
              send();
            });
            sock.once('close', finish);
            send();
          }),
      ),
    );
    return statuses;
  }

  /** One request on one held connection (opened first if none is), after a round (a scenario's `settle`): its status (0: closed unanswered). */
  async one(text: string): Promise<number> {
    if (this.held.size === 0) await this.prepare();
    const sock = this.held.values().next().value as Socket | undefined;
    if (sock === undefined) return 0;
    return new Promise((resolve) => {
      const done = (status: number) => {
        off();
        sock.off('close', closed);
        resolve(status);
      };
      const closed = () => done(0);
      const off = answers(sock, done);
      sock.once('close', closed);
      sock.write(text);
    });
  }

  close(): void {
    for (const s of this.held) s.destroy();
    this.held.clear();
  }
}
