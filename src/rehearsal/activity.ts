/**
 * A server thread's requests, counted as its public front ends take them (HTTP's POST /, the
 * WebSocket transport's frames): the rehearsal looks at the count to know the thread was idle
 * (rehearsal.ts), and busy polling, where on, is told of each one as before (base/busy-poll.ts).
 */
export class Activity {
  /** Requests taken since the thread started. */
  count = 0;

  constructor(private readonly also: { touch(): void } | null) {}

  touch(): void {
    this.count++;
    this.also?.touch();
  }
}
