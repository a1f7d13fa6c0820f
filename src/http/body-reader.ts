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
 *
 * The reading is the HTTP request's context itself (one object a request, not a context and a
 * reader): HttpContext (server.ts) extends BodyReadingContext.
 */
import type { HttpResponse } from 'uWebSockets.js';
import { type BodyResult, type BodySource, type FieldInitializer, RequestContext, type RequestHead } from '../pipeline/context.js';
import { Later } from '../pipeline/later.js';
import type { BodyBudget } from './body-budget.js';
import { utf8Text } from '../front/utf8.js';

/** What every request's body reading shares (one per server). */
export interface BodyReading {
  readonly budget: BodyBudget;
}

export abstract class BodyReadingContext extends RequestContext implements BodySource, RequestHead {
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

  /** Its head (RequestHead: the context is its own head, no object of its own a request). */
  readonly host: string;
  readonly json: boolean;
  /** The declared Content-Length, or -1 (chunked, or no body). */
  readonly declaredBytes: number;
  readonly apiKey: string;

  constructor(
    reqId: string,
    t0: number,
    host: string,
    json: boolean,
    declaredBytes: number,
    apiKey: string,
    init: FieldInitializer,
    readonly res: HttpResponse,
    hasBody: boolean,
    private readonly reading: BodyReading,
  ) {
    super(reqId, t0, null, null, init);
    this.host = host;
    this.json = json;
    this.declaredBytes = declaredBytes;
    this.apiKey = apiKey;
    this.done = !hasBody;
  }

  read(cap: number): Later<BodyResult> {
    const later = new Later<BodyResult>();
    if (this.gone) {
      later.settle('aborted');
      return later;
    }
    if (!this.done) {
      const need = this.declaredBytes >= 0 ? Math.min(this.declaredBytes, cap + 1) : cap + 1;
      if (!this.reading.budget.take(need)) {
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
      if (size > cap || (this.declaredBytes >= 0 && size > this.declaredBytes)) return this.finish('too_large');
      if (isLast && this.received === 0) {
        // The common case: the whole body in one chunk, decoded straight out of uWS's buffer
        // (valid only during this call, which is why the pipeline continues synchronously).
        this.received = size;
        this.done = true;
        return this.finish({ text: utf8Text(ab), bytes: size });
      }
      if (this.declaredBytes >= 0) {
        // Copied into the one buffer of the declared size (uWS stops at Content-Length).
        this.buf ??= Buffer.allocUnsafe(this.declaredBytes);
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
  abortRead(): void {
    this.gone = true;
    if (this.settle !== null) this.finish('aborted');
  }

  /**
   * Settles the read, giving back the budget; the pipeline continues from here, synchronously
   * (a throw of its answer path is the pipeline's own: PipelineHooks.failed).
   */
  private finish(r: BodyResult): void {
    const s = this.settle;
    this.settle = null;
    this.chunks = null;
    this.buf = null;
    this.reading.budget.give(this.reserved);
    this.reserved = 0;
    s?.settle(r);
  }
}
