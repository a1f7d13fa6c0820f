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
  /** Carrying a call (or a keep-warm probe) now: out of the free ones. */
  busy: boolean;
  /** Calls and probes ended on it, ever: unchanged between two looks, it was idle (keep-warm.ts). */
  uses: number;
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
      c.busy = true;
      return c;
    }
    if (provenOnly && this.provenCount > 0) return null;
    const c = free.length > 0 ? free.pop()! : this.all.length < this.max ? this.open() : null;
    if (c !== null) c.busy = true;
    return c;
  }

  /** A call on `c` ended: `answered` (an HTTP answer came back whole) proves it; a failure unproves it. */
  give(c: Conn, answered: boolean): void {
    this.mark(c, answered);
    c.busy = false;
    c.uses++;
    this.free.push(c);
  }

  // --- for keep-warm.ts (http-warm.ts): never on a call's path ---

  /** The first `n` connections opened (opened now where fewer exist): the ones kept warm. */
  oldest(n: number): readonly Conn[] {
    while (this.all.length < Math.min(n, this.max)) this.free.unshift(this.open());
    return this.all.slice(0, n);
  }

  /** Free connections, and of them proven ones. */
  freeCounts(): { free: number; proven: number; room: boolean } {
    let proven = 0;
    for (const c of this.free) if (c.proven) proven++;
    return { free: this.free.length, proven, room: this.all.length < this.max };
  }

  /** Takes `c` out of the free ones (a probe's); false when it is not free. */
  takeThis(c: Conn): boolean {
    const i = this.free.indexOf(c);
    if (i < 0) return false;
    this.free.splice(i, 1);
    c.busy = true;
    return true;
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
    const c: Conn = { client: new Client(this.origin, this.options), proven: false, busy: false, uses: 0 };
    // Closed by the peer (or after an error): no longer known to work until it answers again.
    c.client.on('disconnect', () => this.mark(c, false));
    this.all.push(c);
    return c;
  }
}
