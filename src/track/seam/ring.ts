/**
 * A one-way ring of records in shared memory, from one thread to one other
 * (docs/tracking.md#the-hand-off): the writer copies a record in and moves its cursor, the reader
 * takes every whole record up to it and moves its own; neither ever waits for the other. The
 * reader reads when it needs the records (`drain`) and otherwise sleeps on the writer's cursor
 * (`Atomics.waitAsync`: no timer, no polling); the writer wakes it only when it sleeps and either
 * asked for each record at once (`atOnce`) or `WAKE_BYTES` wait unread. Waking another thread
 * costs it a turn of its event loop: a record that can wait for the reader's next need costs
 * none; and a reader woken before much has piled up reads it in a short turn (it serves requests
 * too), not in one long pause. A record
 * is 8-aligned, its first word its size in bytes, its second its kind (0: the rest of the ring
 * is skipped, the next record is at its start); what follows is its writer's (handed.ts).
 */

/**
 * Header words (Int32): the writer's cursor, the reader's, and the reader's flags, one word so
 * that the writer reads them with one atomic load per record: "asleep", "skipped" (records were
 * skipped: what the writer sent once, it sends again) and "at once" (the reader wants each record
 * as it is written, not when it next reads).
 */
const W = 0;
const R = 1;
const FLAGS = 2;
const ASLEEP = 1;
const SKIPPED = 2;
const AT_ONCE = 4;
/** Header bytes: the records start 8-aligned after it. */
export const HEADER = 32;
/**
 * Bytes waiting unread past which a sleeping reader is woken (about a hundred acceptances of
 * handed.ts: a turn of well under a millisecond on the reader's thread, and a wake-up's
 * cost shared by that many), or half the ring where that is less.
 */
export const WAKE_BYTES = 32 * 1024;
/** The kind that skips to the ring's start. */
const SKIP = 0;

/** A ring's shared memory: `bytes` of records (a power of two) after the header. */
export function allocateRing(bytes: number): SharedArrayBuffer {
  if (!Number.isInteger(Math.log2(bytes)) || bytes < 64 || bytes > 1 << 30)
    throw new RangeError(`a ring's size must be a power of two from 64 B to 1 GiB, not ${bytes}`);
  return new SharedArrayBuffer(HEADER + bytes);
}

/**
 * A Buffer's own encoders and decoders without the argument checks of `write`/`toString`
 * (node's lib/buffer.js defines them on every Buffer; @types/node does not declare them).
 */
export interface RingBytes extends Buffer {
  latin1Write(s: string, offset: number): number;
  utf8Write(s: string, offset: number, length: number): number;
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

/** Views over a ring's memory, shared by its writer and reader and the record codec. */
export class RingViews {
  readonly i32: Int32Array;
  readonly u32: Uint32Array;
  readonly f64: Float64Array;
  readonly buf: RingBytes;
  /** The records' bytes (a power of two) and its mask. */
  readonly cap: number;
  readonly mask: number;
  /** Bytes unread past which a sleeping reader is woken. */
  readonly wakeAt: number;

  constructor(sab: SharedArrayBuffer) {
    this.i32 = new Int32Array(sab);
    this.u32 = new Uint32Array(sab);
    this.f64 = new Float64Array(sab);
    this.buf = Buffer.from(sab) as RingBytes;
    this.cap = sab.byteLength - HEADER;
    this.mask = this.cap - 1;
    this.wakeAt = Math.min(WAKE_BYTES, this.cap >> 1);
  }

  /** The reader tells the writer that what it sent once must be sent again (`RingWriter.skipped`). */
  askAgain(): void {
    Atomics.or(this.i32, FLAGS, SKIPPED);
  }
}

/** The writing end (one thread). */
export class RingWriter extends RingViews {
  /** The writer's cursor (bytes written, modulo 2^32 as an int32): only this thread moves it. */
  private w = 0;
  /**
   * The reader's cursor as last read: it only ever moves on, so the room it leaves is at least
   * what this says, and it is read again only when that is not enough (one atomic load less per record).
   */
  private r = 0;

  /** A writer of a ring written before (its cursors as they stand) goes on from where the last left it. */
  constructor(sab: SharedArrayBuffer) {
    super(sab);
    this.w = Atomics.load(this.i32, W);
    this.r = Atomics.load(this.i32, R);
  }

  /** Rounds a record's size up to the ring's alignment. */
  static size(bytes: number): number {
    return (bytes + 7) & ~7;
  }

  /**
   * Room for a record of `size` bytes (a `size()`, at most the ring's): the byte offset to write
   * it at (its size and kind words included), or -1 when the ring has no room now (the reader is
   * behind). A record that does not fit before the ring's end goes at its start: the rest of the
   * ring is marked skipped, at once: an empty ring takes any record up to half its size, and a
   * larger one once the reader has passed that skip.
   */
  begin(size: number): number {
    if (size > this.cap) return -1;
    let pos = this.w & this.mask;
    const need = pos + size > this.cap ? this.cap - pos + size : size;
    if (((this.w - this.r) | 0) + need > this.cap) this.r = Atomics.load(this.i32, R);
    let used = (this.w - this.r) | 0;
    if (pos + size > this.cap) {
      const skip = this.cap - pos;
      if (used + skip > this.cap) return -1;
      this.u32[(HEADER + pos) >> 2] = skip;
      this.u32[((HEADER + pos) >> 2) + 1] = SKIP;
      this.w = (this.w + skip) | 0;
      Atomics.store(this.i32, W, this.w);
      used += skip;
      pos = 0;
    }
    return used + size > this.cap ? -1 : HEADER + pos;
  }

  /**
   * True once after the reader skipped records it could not read, or asked (what was sent once
   * must be sent again). A plain read of the flags, not an atomic one: a flag seen a record late
   * only sends the names one record later, and the read costs nothing beside an atomic load.
   */
  skipped(): boolean {
    if ((this.i32[FLAGS]! & SKIPPED) === 0) return false;
    Atomics.and(this.i32, FLAGS, ~SKIPPED);
    return true;
  }

  /** The record begun at `at` is written: the reader may take it (and is woken if it sleeps). */
  end(at: number, size: number, kind: number): void {
    this.u32[at >> 2] = size;
    this.u32[(at >> 2) + 1] = kind;
    this.w = (this.w + size) | 0;
    Atomics.store(this.i32, W, this.w);
    // Read after the cursor is published: a reader that went to sleep before this sees the cursor
    // moved when it waits (Atomics.waitAsync compares), or its flag is seen here.
    const f = Atomics.load(this.i32, FLAGS);
    if ((f & ASLEEP) !== 0 && ((f & AT_ONCE) !== 0 || this.behind())) {
      Atomics.and(this.i32, FLAGS, ~ASLEEP);
      Atomics.notify(this.i32, W, 1);
    }
  }

  /** More than `wakeAt` bytes unread (the reader's cursor read again only when the last one read says so). */
  private behind(): boolean {
    if (((this.w - this.r) | 0) <= this.wakeAt) return false;
    this.r = Atomics.load(this.i32, R);
    return ((this.w - this.r) | 0) > this.wakeAt;
  }
}

/** The reading end (one other thread). */
export class RingReader extends RingViews {
  private r = 0;
  private closed = false;

  /**
   * Hands every whole record written so far to `take(at, size, kind)`, in order. A record whose
   * size is not one the writer makes ends the reading there: the rest up to the writer's cursor
   * is skipped (returned: the bytes skipped), never read as records, and the writer told.
   */
  drain(take: (at: number, size: number, kind: number) => void): number {
    const w = Atomics.load(this.i32, W);
    let skipped = 0;
    while (this.r !== w) {
      const at = HEADER + (this.r & this.mask);
      const size = this.u32[at >> 2]!;
      const kind = this.u32[(at >> 2) + 1]!;
      const left = (w - this.r) | 0;
      if (size < 8 || size % 8 !== 0 || size > left || (this.r & this.mask) + size > this.cap) {
        skipped = left;
        this.r = w;
        this.askAgain();
        break;
      }
      this.r = (this.r + size) | 0;
      if (kind !== SKIP) take(at, size, kind);
      // A skip runs to the ring's end (`begin`): one anywhere else is a record overwritten, and what
      // it held (a name, perhaps) the writer sends again.
      else if (at - HEADER + size !== this.cap) this.askAgain();
    }
    Atomics.store(this.i32, R, this.r);
    return skipped;
  }

  /** Whether the writer wakes this thread for each record (else only past `WAKE_BYTES` unread). */
  atOnce(on: boolean): void {
    if (on) Atomics.or(this.i32, FLAGS, AT_ONCE);
    else Atomics.and(this.i32, FLAGS, ~AT_ONCE);
  }

  /**
   * Calls `wake()` when the writer wakes this thread (see `atOnce`), until `close()`; at once if
   * records are waiting now. The loop is not kept alive by the wait.
   */
  sleep(wake: () => void): void {
    for (;;) {
      if (this.closed) return;
      Atomics.or(this.i32, FLAGS, ASLEEP);
      const waited = Atomics.waitAsync(this.i32, W, this.r);
      if (waited.async) {
        void waited.value.then(() => {
          if (this.closed) return;
          wake();
          this.sleep(wake);
        });
        return;
      }
      Atomics.and(this.i32, FLAGS, ~ASLEEP);
      wake();
    }
  }

  close(): void {
    this.closed = true;
  }
}
