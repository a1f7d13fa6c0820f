/**
 * A table by transaction hash of what is in flight on one thread (the duplicates table's sends
 * in flight, src/forward/dedup.ts): nothing allocated as entries come and go. A Map's table is rebuilt
 * as entries are added and deleted (a new one every few forwards, measured with bench:alloc's
 * profile); this one is open addressing with linear probing and backward-shift deletion (no
 * tombstones, so it is never rebuilt for them), grown (doubled) only when more than half its
 * slots are taken. Keys are transaction hashes (hex: their last characters are as good as any
 * hash of them); any string works.
 */
export class InFlight<V> {
  private keys: (string | undefined)[];
  private values: (V | undefined)[];
  private mask: number;
  private count = 0;

  constructor(capacity = 64) {
    let n = 8;
    while (n < capacity) n *= 2;
    this.keys = new Array<string | undefined>(n).fill(undefined);
    this.values = new Array<V | undefined>(n).fill(undefined);
    this.mask = n - 1;
  }

  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    const i = this.find(key);
    return i < 0 ? undefined : this.values[i];
  }

  has(key: string): boolean {
    return this.find(key) >= 0;
  }

  set(key: string, value: V): void {
    const keys = this.keys;
    let i = slotOf(key) & this.mask;
    for (;;) {
      const k = keys[i];
      if (k === undefined) break;
      if (k === key) {
        this.values[i] = value;
        return;
      }
      i = (i + 1) & this.mask;
    }
    keys[i] = key;
    this.values[i] = value;
    if (++this.count * 2 > keys.length) this.grow();
  }

  delete(key: string): boolean {
    let i = this.find(key);
    if (i < 0) return false;
    const { keys, values, mask } = this;
    // Backward shift: every entry after the hole in its run that may move into it does.
    for (let j = (i + 1) & mask; keys[j] !== undefined; j = (j + 1) & mask) {
      const home = slotOf(keys[j]!) & mask;
      // The entry at j stays unless the hole lies between its home slot and j (cyclically).
      if (i <= j ? home > i && home <= j : home > i || home <= j) continue;
      keys[i] = keys[j];
      values[i] = values[j];
      i = j;
    }
    keys[i] = undefined;
    values[i] = undefined;
    this.count--;
    return true;
  }

  private find(key: string): number {
    const keys = this.keys;
    for (let i = slotOf(key) & this.mask; ; i = (i + 1) & this.mask) {
      const k = keys[i];
      if (k === undefined) return -1;
      if (k === key) return i;
    }
  }

  private grow(): void {
    const { keys, values } = this;
    const n = keys.length * 2;
    this.keys = new Array<string | undefined>(n).fill(undefined);
    this.values = new Array<V | undefined>(n).fill(undefined);
    this.mask = n - 1;
    this.count = 0;
    for (let i = 0; i < keys.length; i++) if (keys[i] !== undefined) this.set(keys[i]!, values[i]!);
  }
}

/** A slot number from a key's last (up to) eight characters. */
function slotOf(key: string): number {
  let h = 0;
  for (let i = Math.max(0, key.length - 8); i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return h >>> 0;
}
