/**
 * Sequence numbers for one edge that owns the controller's ordering (the `ordered` mode), by
 * Nitro's rules (github.com/OffchainLabs/nitro, timeboost/express_lane_service.go,
 * SequenceExpressLaneSubmission): numbers are per round from 0; the sequencer publishes them in
 * order and holds a later one until the gap before it fills (until the round ends); a number is
 * used once it is stored (an answer of null, or an error after storing); the refusals before
 * storing (not the controller, bad round, too low, already seen, the future limit) do not use
 * it; a number more than `max-future-sequence-distance` (1000 by default, timeboost/config.go)
 * ahead of the next expected one is refused.
 *
 * Gapless: every number handed out is either known used, or handed out again. A number whose
 * submission had no clear answer is handed out again too: if it was in fact used, the next
 * submission carrying it is refused TOO_LOW or ALREADY_SEEN (not stored), falls back to the plain
 * path, and the number is then known used. Skipping it instead would leave a gap that holds every
 * later number of the round.
 */
import type { LaneReading } from './answer.js';

export class OrderedSequence {
  #round = -1;
  #next = 0n;
  /** Handed out again first, lowest first. */
  #free: bigint[] = [];
  readonly #out = new Set<bigint>();

  constructor(private readonly maxFutureDistance: number) {}

  /** The next number for `round`, or null when it would pass the future limit (take the plain path). */
  take(round: number): bigint | null {
    if (round !== this.#round) {
      this.#round = round;
      this.#next = 0n;
      this.#free = [];
      this.#out.clear();
    }
    // The lowest number not known used: the sequencer's next expected one, at best.
    let low = this.#next;
    for (const n of this.#out) if (n < low) low = n;
    if (this.#free.length > 0 && this.#free[0]! < low) low = this.#free[0]!;
    const n = this.#free.length > 0 ? this.#free.shift()! : this.#next;
    if (n > low + BigInt(this.maxFutureDistance)) {
      if (n !== this.#next) this.#free.unshift(n);
      return null;
    }
    if (n === this.#next) this.#next++;
    this.#out.add(n);
    return n;
  }

  /** What became of number `n` of `round` (a number of a past round is forgotten). */
  release(round: number, n: bigint, reading: LaneReading): void {
    if (round !== this.#round || !this.#out.delete(n)) return;
    const used =
      reading.kind === 'queued' ||
      (reading.kind === 'not-sequenced' && (reading.code === 'SEQUENCE_NUMBER_TOO_LOW' || reading.code === 'SEQUENCE_NUMBER_ALREADY_SEEN'));
    if (used) return;
    const i = this.#free.findIndex((f) => f > n);
    if (i < 0) this.#free.push(n);
    else this.#free.splice(i, 0, n);
  }

  /** Numbers handed out and not yet released (tests, status). */
  get outstanding(): number {
    return this.#out.size;
  }
}
