/**
 * The request context. What the front end knows of a request is here (BaseCtx); everything a
 * stage learns it adds as one field of its own, declared in its own file: a stage's type names
 * the fields it reads and the field it adds, and the pipeline builder checks that every field a
 * stage reads was added before it. At run time it is one object whose fields are all set up
 * front, in the pipeline's order (one hidden class for every request at every exit).
 */
import type { ScannedRequest } from '../rpc/rpc-scan.js';

/**
 * What the front end knows of a request before its body, in terms of no transport: the front
 * end fills it from what its protocol carries (HTTP: headers, read synchronously from the uWS
 * request, which is gone after), so the stages read nothing transport-specific.
 */
export interface RequestHead {
  /** The host the client addressed (HTTP: the raw Host header; '' when absent). */
  readonly host: string;
  /** Whether the body is declared as JSON (HTTP: Content-Type application/json, parameters allowed). */
  readonly json: boolean;
  /** The body's size as declared before it is read (HTTP: Content-Length), or -1 when undeclared. */
  readonly declaredBytes: number;
  /** The API key presented ('' when none: HTTP X-Api-Key). Never logged, never echoed. */
  readonly apiKey: string;
}

/** The body read, or why there is none: over the cap, or the client went away mid-body. */
/** The body, or why not: over the cap, the client left, or the process-wide body budget is spent (refused unread). */
export type BodyResult = Body | 'too_large' | 'aborted' | 'overloaded';

/** A whole request body, decoded as UTF-8 (invalid sequences become U+FFFD, as JSON.parse of a Buffer would see them). */
export interface Body {
  readonly text: string;
  /** Its size on the wire, in bytes. */
  readonly bytes: number;
}

/** The request body as a stream of chunks, with the cap enforced as it arrives. */
export interface BodySource {
  /** Reads the whole body; gives 'too_large' as soon as more than `cap` bytes arrived. */
  read(cap: number): PromiseLike<BodyResult>;
  /** Body bytes received so far (for the log line of a body cut off). */
  readonly received?: number;
}

export type RpcId = number | string;

/**
 * A parsed JSON-RPC request (the parse stage's field, read by the observers of every answer):
 * declared once, where the one-pass read makes it (rpc-scan.ts); the JSON.parse path gives the same.
 */
export type RpcRequest = ScannedRequest;

export interface BaseCtx {
  readonly reqId: string;
  /** performance.now() when the request arrived. */
  readonly t0: number;
  readonly head: RequestHead;
  readonly bodySource: BodySource;
  /** Set by the front end when the client has gone; the runner stops at the next await. */
  aborted: boolean;
  /** The id of the parsed request as JSON ('null' until parsed). */
  idJson: string;
  /** Time each stage of this request (profiling, or the sampled per-stage metrics): set by the pipeline. */
  timed: boolean;
  /** Each stage's time in ms where they are kept for the Server-Timing header (profiling), else null. */
  timings: Float64Array | null;
}

/** Sets a context's stage fields to undefined, in the pipeline's order (see fieldInitializer). */
export type FieldInitializer = (ctx: object) => void;

const NO_FIELDS: FieldInitializer = () => {};

/**
 * The initializer of a list of field names, compiled once: one plain store per field, as class
 * field declarations would make (a loop of computed-key stores is a generic keyed store, paid
 * on every request). The names come from the stages' code, never from input.
 */
export function fieldInitializer(fields: readonly string[]): FieldInitializer {
  for (const f of fields) fieldName(f);
  return new Function('ctx', fields.map((f) => `ctx.${f} = undefined;`).join('\n')) as FieldInitializer;
}

/** The one concrete context object; stages fill their fields in order. */
export class RequestContext implements BaseCtx {
  /** What was read of the request before its body (the context itself where it is its own head). */
  readonly head: RequestHead;
  /** Where the body is read from (the context itself where it reads its own). */
  readonly bodySource: BodySource;
  aborted = false;
  idJson = 'null';
  timed = false;
  timings: Float64Array | null = null;

  /**
   * `init`: sets the fields the pipeline's stages add (Pipeline.initFields), so every context
   * has the same shape from the start, whichever stage answers.
   */
  constructor(
    readonly reqId: string,
    readonly t0: number,
    /** `null`: the context is its own head (HTTP's: http/body-reader.ts), as for `bodySource`. */
    head: RequestHead | null,
    /** `null`: the context reads its body itself (HTTP's: http/body-reader.ts). */
    bodySource: BodySource | null,
    init: FieldInitializer = NO_FIELDS,
  ) {
    this.head = head ?? (this as unknown as RequestHead);
    this.bodySource = bodySource ?? (this as unknown as BodySource);
    init(this);
  }
}

function fieldName(f: string): string {
  if (!/^[A-Za-z_$][\w$]*$/.test(f)) throw new Error(`not a field name: ${JSON.stringify(f)}`);
  return f;
}

/** Sets the field `K` on a context and returns it under its enriched type (no allocation). */
export type FieldSetter<K extends string> = <C extends BaseCtx, V>(ctx: C, value: V) => C & { readonly [P in K]: V };

/**
 * The setter of one field, compiled once (a stage's module makes its own): a plain named store.
 * A shared setter storing under a computed key is one store site for every field of every stage
 * to V8: megamorphic, a generic keyed store on every request (measured with bench:instr).
 */
export function fieldSetter<K extends string>(key: K): FieldSetter<K> {
  return new Function('ctx', 'v', `ctx.${fieldName(key)} = v;\nreturn ctx;`) as FieldSetter<K>;
}
