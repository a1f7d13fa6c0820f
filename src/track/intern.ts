/**
 * One copy of each distinct string a tracker keeps in many entries (docs/tracking.md#how-the-watcher-works-and-what-it-costs):
 * the sender addresses (a policy's or the chain's string, one per acceptance or answer). An
 * account, sequencer or rule handed over by another thread is one string per name already (its
 * name record's: seam/handed.ts).
 * Bounded: past `max` distinct values it starts over, so strings a peer controls (a sender the
 * chain RPC names) never grow it without bound; an entry made before keeps its copy.
 */
export class Interned {
  private readonly known = new Map<string, string>();

  constructor(private readonly max: number) {}

  /** Distinct values held (at most `max`). */
  get size(): number {
    return this.known.size;
  }

  /** The one copy of `s`. */
  of(s: string): string {
    const known = this.known.get(s);
    if (known !== undefined) return known;
    if (this.known.size >= this.max) this.known.clear();
    this.known.set(s, s);
    return s;
  }
}
