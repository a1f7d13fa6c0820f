/**
 * A first-in first-out queue taken from the front in constant time (an array and a head index,
 * compacted now and then instead of `Array.shift`, which moves every element), used by every
 * upstream for its calls waiting for a connection and by the WebSocket kind's deadline queues.
 */
export class Queue<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The first item, left in place; undefined when empty. */
  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined;
  }

  /** The item `k` places from the front (0: the first), left in place; undefined past the end. */
  at(k: number): T | undefined {
    const i = this.head + k;
    return i < this.items.length ? this.items[i] : undefined;
  }

  /** Takes the first item; undefined when empty. */
  shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined; // not held for the collector once taken
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Empties the queue, returning what it held, first first. */
  clear(): T[] {
    const rest = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return rest;
  }
}
