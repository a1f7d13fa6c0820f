/**
 * A reconnect's wait, one rule for every stream txgate keeps open to a peer (a WebSocket
 * sequencer, the chain RPC's head subscription, a flashblocks stream): half to all of the current
 * step at random (so threads and processes do not reconnect in step), the step doubling after each
 * attempt up to `max`, and back to `min` once connected.
 */
export class Backoff {
  private step: number;

  constructor(
    private readonly min = 100,
    private readonly max = 5_000,
  ) {
    this.step = min;
  }

  /** The wait before the next attempt; the step after it doubled. */
  next(): number {
    const ms = this.step * (0.5 + Math.random() / 2);
    this.step = Math.min(this.step * 2, this.max);
    return ms;
  }

  /** Connected: the next wait starts from `min` again. */
  reset(): void {
    this.step = this.min;
  }

  /** The peer refused outright: the next wait is the longest. */
  longest(): void {
    this.step = this.max;
  }
}
