/**
 * The status table's index by transaction hash (table.ts; docs/tracking.md#the-hand-off): a map
 * keyed by a small integer read from the hash's last hex characters, not by the hash string.
 * An acceptance handed over by another thread arrives as a new string, and the engine hashes a
 * string key over every one of its 66 characters (about 800 instructions a tracked acceptance,
 * counted with callgrind); eight characters read as an integer cost a few dozen, and an integer
 * key is hashed in a handful. Hashes whose keys agree share a bucket of at most `BUCKET`, told
 * apart by the whole string; past that a hash goes to a map keyed by the whole string (hashes
 * not drawn from keccak, a test's, and a sender who grinds keys: no scan is ever long).
 */

/** What the index holds: anything with its transaction hash. */
export interface Hashed {
  readonly hash: string;
}

/** Entries a bucket holds before a hash of its key goes to the string-keyed map. */
const BUCKET = 4;

/**
 * The key of a hash: its last 8 characters as hex digits (either case; any other character
 * still gives a key: the whole string decides equality), 30 bits (a small integer on every
 * build of the engine).
 */
export function keyOf(hash: string): number {
  let k = 0;
  for (let i = hash.length - 8; i < hash.length; i++) {
    const c = hash.charCodeAt(i);
    // '0'-'9' are 0x30-0x39, 'a'-'f' 0x61-0x66, 'A'-'F' 0x41-0x46: the low 4 bits, plus 9 for a letter.
    k = (k << 4) | ((c <= 57 ? c : c + 9) & 15);
  }
  return k >>> 2;
}

export class HashIndex<V extends Hashed> {
  private readonly map = new Map<number, V | V[]>();
  /** Hashes whose bucket was full, by the whole string. */
  private readonly overflow = new Map<string, V>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(hash: string): V | undefined {
    return this.getAt(keyOf(hash), hash);
  }

  /** `get` with the hash's key already read (`keyOf`). */
  getAt(key: number, hash: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      if (!Array.isArray(v)) {
        if (v.hash === hash) return v;
      } else for (const x of v) if (x.hash === hash) return x;
    }
    return this.overflow.size === 0 ? undefined : this.overflow.get(hash);
  }

  /**
   * Adds `value` under `key` (its hash's `keyOf`) unless a value of its hash is held: true, or
   * false with nothing changed. One map lookup and one store (a `get` then a `set` look the
   * key up twice): the owner's path for every acceptance it reads.
   */
  addAt(key: number, value: V): boolean {
    const hash = value.hash;
    const v = this.map.get(key);
    // The overflow may hold the hash whatever its bucket holds now (removals shrink a bucket).
    if (this.overflow.size > 0 && this.overflow.has(hash)) return false;
    if (v === undefined) this.map.set(key, value);
    else if (!Array.isArray(v)) {
      if (v.hash === hash) return false;
      this.map.set(key, [v, value]);
    } else {
      for (const x of v) if (x.hash === hash) return false;
      if (v.length < BUCKET) v.push(value);
      else this.overflow.set(hash, value);
    }
    this.count++;
    return true;
  }

  /** Adds `value`, or replaces the one of the same hash (the index holds one per hash). */
  set(value: V): void {
    const hash = value.hash;
    const key = keyOf(hash);
    const v = this.map.get(key);
    if (v !== undefined && !Array.isArray(v) && v.hash === hash) return void this.map.set(key, value);
    if (Array.isArray(v)) {
      const i = v.findIndex((x) => x.hash === hash);
      if (i >= 0) return void (v[i] = value);
    }
    if (this.overflow.size > 0 && this.overflow.has(hash)) return void this.overflow.set(hash, value);
    this.count++;
    if (v === undefined) this.map.set(key, value);
    else if (!Array.isArray(v)) this.map.set(key, [v, value]);
    else if (v.length < BUCKET) v.push(value);
    else this.overflow.set(hash, value);
  }

  /** Removes `value` itself (not another of its hash); false if it was not held. */
  delete(value: V): boolean {
    const key = keyOf(value.hash);
    const v = this.map.get(key);
    if (v === value) this.map.delete(key);
    else if (Array.isArray(v) && v.includes(value)) {
      v.splice(v.indexOf(value), 1);
      if (v.length === 1) this.map.set(key, v[0]!);
    } else if (this.overflow.get(value.hash) === value) this.overflow.delete(value.hash);
    else return false;
    this.count--;
    return true;
  }

  *values(): IterableIterator<V> {
    for (const v of this.map.values()) {
      if (Array.isArray(v)) yield* v;
      else yield v;
    }
    yield* this.overflow.values();
  }
}
