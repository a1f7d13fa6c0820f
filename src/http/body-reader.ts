/**
 * A request body read from uWebSockets.js for the size-cap stage: streamed, refused as soon as
 * it passes the cap, copied only when it arrives in several chunks (uWS neuters each chunk's
 * ArrayBuffer on return), and settled synchronously so the pipeline continues inside the
 * callback that delivered the last chunk.
 */
import type { HttpResponse } from 'uWebSockets.js';
import type { BodyResult, BodySource } from '../pipeline/context.js';
import { Later } from '../pipeline/later.js';

export class BodyReader<Owner = unknown> implements BodySource {
  /** True once the whole body was read, so the connection can be kept alive after answering. */
  done: boolean;
  received = 0;
  private chunks: Buffer[] | null = null;
  private settle: Later<BodyResult> | null = null;
  private gone = false;

  /** The request this body belongs to, handed to `onFailure` (set by its owner). */
  owner: Owner | null = null;

  constructor(
    private readonly res: HttpResponse,
    hasBody: boolean,
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
    this.settle = later;
    this.res.onData((ab, isLast) => {
      if (this.settle === null) return; // already settled (cap reached): drop the rest
      const size = this.received + ab.byteLength;
      if (size > cap) return this.finish('too_large');
      this.received = size;
      if (isLast && this.chunks === null) {
        // The common case: the whole body in one chunk, decoded straight out of uWS's buffer
        // (valid only during this call, which is why the pipeline continues synchronously).
        this.done = true;
        return this.finish({ text: Buffer.from(ab).toString('utf8'), bytes: size });
      }
      (this.chunks ??= []).push(Buffer.from(new Uint8Array(ab))); // copy: ab is neutered on return
      if (isLast) {
        this.done = true;
        this.finish({ text: Buffer.concat(this.chunks, size).toString('utf8'), bytes: size });
      }
    });
    return later;
  }

  /** The client left: a pending read settles as 'aborted' (so the request is still logged). */
  abort(): void {
    this.gone = true;
    if (this.settle !== null) this.finish('aborted');
  }

  /** Settles the read; the pipeline continues from here, synchronously. */
  private finish(r: BodyResult): void {
    const s = this.settle;
    this.settle = null;
    this.chunks = null;
    if (s === null) return;
    try {
      s.settle(r);
    } catch (e) {
      this.onFailure(this.owner!, e);
    }
  }
}
