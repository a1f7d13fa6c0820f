/**
 * The request context, typed stage by stage: each stage adds one field, and its output type is
 * the next stage's input type (raw → chain → body → rpc → rawTx → account → grant → tx → fee →
 * quota). At run time it is one object with every field declared up front (one hidden class).
 */
import type { Account, Grant } from '../accounts/types.js';
import type { ChainRuntime } from '../chains.js';
import type { DecodedTx } from '../tx/types.js';

/** What the front end copies out of the uWS request synchronously (the request is gone after). */
export interface RequestHead {
  /** Raw Host header value ('' when absent). */
  readonly host: string;
  readonly contentType: string;
  /** Declared Content-Length, or -1 when absent. */
  readonly contentLength: number;
  /** The X-Api-Key header ('' when absent). Never logged, never echoed. */
  readonly apiKey: string;
}

/** The body read, or why there is none: over the cap, or the client went away mid-body. */
export type BodyResult = Body | 'too_large' | 'aborted';

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

export type { ChainRuntime };

export type RpcId = number | string;

export interface RpcRequest {
  readonly id: RpcId;
  /** The id as JSON, echoed in the response. */
  readonly idJson: string;
  readonly method: string;
  readonly params: readonly unknown[];
}

export interface FeeVerdict {
  /** The pattern that paid the tip, or 'untipped' for an allowed untipped plain transfer. */
  readonly via: 'transfer' | 'call' | 'untipped';
}

export interface Quota {
  readonly limit: number;
  readonly remaining: number;
}

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
  /** Time each stage of this request (profiling, or the sampled per-stage metrics). */
  timed: boolean;
}

export interface HostCtx extends BaseCtx {
  readonly chain: ChainRuntime;
}
export interface SizedCtx extends HostCtx {
  readonly body: Body;
}
export interface ParsedCtx extends SizedCtx {
  readonly rpc: RpcRequest;
}
/** rawTx: a validated 0x-hex string, or (for decode to name precisely) an object or a base58/64 string. */
export interface RoutedCtx extends ParsedCtx {
  readonly rawTx: string | Readonly<Record<string, unknown>>;
}
export interface AuthedCtx extends RoutedCtx {
  readonly account: Account;
}
export interface GrantedCtx extends AuthedCtx {
  readonly grant: Grant;
}
export interface DecodedCtx extends GrantedCtx {
  readonly tx: DecodedTx;
}
export interface AdmittedCtx extends DecodedCtx {
  readonly fee: FeeVerdict;
}
/** sender: the recovered sender where the grant's allow-list asked for it, else null (not recovered). */
export interface SenderCheckedCtx extends AdmittedCtx {
  readonly sender: string | null;
}
export interface LimitedCtx extends SenderCheckedCtx {
  readonly quota: Quota;
}

/** The one concrete context object; stages fill its fields in order. */
export class RequestContext implements BaseCtx {
  aborted = false;
  idJson = 'null';
  timed = false;
  chain: ChainRuntime | undefined = undefined;
  body: Body | undefined = undefined;
  rpc: RpcRequest | undefined = undefined;
  rawTx: string | Readonly<Record<string, unknown>> | undefined = undefined;
  account: Account | undefined = undefined;
  grant: Grant | undefined = undefined;
  tx: DecodedTx | undefined = undefined;
  fee: FeeVerdict | undefined = undefined;
  sender: string | null | undefined = undefined;
  quota: Quota | undefined = undefined;

  constructor(
    readonly reqId: string,
    readonly t0: number,
    readonly head: RequestHead,
    readonly bodySource: BodySource,
  ) {}
}

/** Sets one field on the context and returns it under its enriched type (no allocation). */
export function enrich<C extends BaseCtx, K extends string, V>(ctx: C, key: K, value: V): C & { readonly [P in K]: V } {
  (ctx as unknown as Record<string, unknown>)[key] = value;
  return ctx as C & { readonly [P in K]: V };
}
