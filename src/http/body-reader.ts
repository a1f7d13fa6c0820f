/**
 * A request body read from uWebSockets.js for the size-cap stage: streamed, refused as soon as
 * it passes the cap, settled synchronously so the pipeline continues inside the callback that
 * delivered the last chunk.
 *
 * Bounded: before its first byte is read, a body reserves its declared size (a chunked body its
 * cap) in the process-wide budget (body-budget.ts) and is refused `overloaded`, unread, when that
 * does not fit; the reservation is given back when the read ends however it ends. A body that
 * arrives in one chunk is decoded straight out of uWS's buffer; one that arrives in several is
 * copied into one buffer of its declared size (uWS neuters each chunk's ArrayBuffer on return),
 * or, chunked, kept as its chunks.
 */
import type { HttpResponse } from 'uWebSockets.js';
import type { BodyResult, BodySource } from '../pipeline/context.js';
import { Later } from '../pipeline/later.js';
import type { BodyBudget } from './body-budget.js';
import { utf8Text } from '../front/utf8.js';

export class BodyReader<Owner = unknown> implements BodySource {
  /** True once the whole body was read, so the connection can be kept alive after answering. */
  done: boolean;
  received = 0;
  /** A declared body's bytes so far (several chunks), or a chunked body's chunks. */
  private buf: Buffer | null = null;
  private chunks: Buffer[] | null = null;
  private settle: Later<BodyResult> | null = null;
  private gone = false;
  /** Bytes reserved in the budget while reading. */
  private reserved = 0;

  /** The request this body belongs to, handed to `onFailure` (set by its owner). */
  owner: Owner | null = null;

  constructor(
    private readonly res: HttpResponse,
    hasBody: boolean,
    /** The declared Content-Length, or -1 (chunked, or no body). */
    private readonly declared: number,
    private readonly budget: BodyBudget,
    /** A pipeline that throws while continuing from the read (answered 500 by the server); one function for every request. */
    private readonly onFailure: (owner: Owner, e: unknown) => void,
  ) {
    this.done = !hasBody;
  }

  read(cap: number): Later<BodyResult> {
    const later = new Later<BodyResult>();
    if (this.gone) {
      later.settle('aborted');
      return later;
    }
    if (!this.done) {
      const need = this.declared >= 0 ? Math.min(this.declared, cap + 1) : cap + 1;
      if (!this.budget.take(need)) {
        later.settle('overloaded');
        return later;
      }
      this.reserved = need;
    }
    this.settle = later;
    this.res.onData((ab, isLast) => {
      if (this.settle === null) return; // already settled (cap reached): drop the rest
      const n = ab.byteLength;
      const size = this.received + n;
      if (size > cap || (this.declared >= 0 && size > this.declared)) return this.finish('too_large');
      if (isLast && this.received === 0) {
        // The common case: the whole body in one chunk, decoded straight out of uWS's buffer
        // (valid only during this call, which is why the pipeline continues synchronously).
        this.received = size;
        this.done = true;
        return this.finish({ text: utf8Text(ab), bytes: size });
      }
      if (this.declared >= 0) {
        // Copied into the one buffer of the declared size (uWS stops at Content-Length).
        this.buf ??= Buffer.allocUnsafe(this.declared);
        this.buf.set(new Uint8Array(ab), this.received);
      } else (this.chunks ??= []).push(Buffer.from(new Uint8Array(ab))); // copy: ab is neutered on return
      this.received = size;
      if (isLast) {
        this.done = true;
        const text = this.buf !== null ? this.buf.toString('utf8', 0, size) : Buffer.concat(this.chunks!, size).toString('utf8');
        this.finish({ text, bytes: size });
      }
    });
    return later;
  }

  /** The client left: a pending read settles as 'aborted' (so the request is still logged). */
  abort(): void {
    this.gone = true;
    if (this.settle !== null) this.finish('aborted');
  }

  /** Settles the read, giving back the budget; the pipeline continues from here, synchronously. */
  private finish(r: BodyResult): void {
    const s = this.settle;
    this.settle = null;
    this.chunks = null;
    this.buf = null;
    this.budget.give(this.reserved);
    this.reserved = 0;
    if (s === null) return;
    try {
      s.settle(r);
    } catch (e) {
      this.onFailure(this.owner!, e);
    }
  }
}
