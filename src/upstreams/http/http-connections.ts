/**
 * The keep-alive connections of one HTTP upstream, one undici Client each (one request at a time
 * on each), chosen by whether they work: a connection is *proven* once it carried an answer, and
 * stays so until it disconnects or fails. A call takes a free proven connection first, else a
 * free one that must (re)connect, else opens a new one up to the bound.
 *
 * Why it matters (docs/design.md §5.4): a sequencer at its connection limit, or a proxy in front
 * of one, accepts a new connection and closes it unread. A call that took such a fresh
 * connection is lost for nothing, and one written to it must be resolved by asking again; asked
 * on yet another fresh connection, it fails the same way while the connections the sequencer
 * does serve sit idle. So a call can ask for a proven connection only (`take(true)`): it then
 * waits for one to come free rather than open a fresh one, as long as one exists.
 */
import { Client } from 'undici';

export interface Conn {
  readonly client: Client;
  /** Carried an answer since it last connected. */
  proven: boolean;
}

export class HttpConnections {
  private readonly all: Conn[] = [];
  /** Free connections, the most recently released last. */
  private readonly free: Conn[] = [];
  /** How many connections are proven now (free or busy). */
  private provenCount = 0;

  constructor(
    private readonly origin: string,
    private readonly max: number,
    private readonly options: Client.Options,
  ) {}

  /** Some connection (free or busy) has carried an answer and not failed since. */
  get anyProven(): boolean {
    return this.provenCount > 0;
  }

  /**
   * A free connection: a proven one first, else (unless `provenOnly` while a proven one exists)
   * one that may have to connect, else a new one within the bound; null when none can be had now.
   */
  take(provenOnly: boolean): Conn | null {
    const free = this.free;
    for (let i = free.length - 1; i >= 0; i--) {
      const c = free[i]!;
      if (!c.proven) continue;
      free[i] = free[free.length - 1]!;
      free.pop();
      return c;
    }
    if (provenOnly && this.provenCount > 0) return null;
    if (free.length > 0) return free.pop()!;
    if (this.all.length < this.max) return this.open();
    return null;
  }

  /** A call on `c` ended: `answered` (an HTTP answer came back whole) proves it; a failure unproves it. */
  give(c: Conn, answered: boolean): void {
    this.mark(c, answered);
    this.free.push(c);
  }

  /** Closes every connection: gracefully (written requests are waited for) or at once. */
  async close(abandon: boolean): Promise<void> {
    await Promise.all(this.all.map((c) => (abandon ? c.client.destroy() : c.client.close())));
  }

  private mark(c: Conn, proven: boolean): void {
    if (c.proven === proven) return;
    c.proven = proven;
    this.provenCount += proven ? 1 : -1;
  }

  private open(): Conn {
    const c: Conn = { client: new Client(this.origin, this.options), proven: false };
    // Closed by the peer (or after an error): no longer known to work until it answers again.
    c.client.on('disconnect', () => this.mark(c, false));
    this.all.push(c);
    return c;
  }
}
