/**
 * The size cap stage: a declared Content-Length over the cap is refused before anything is read;
 * otherwise the body is read as it arrives and reading stops at the cap (chunked bodies too).
 *
 * The cap before authentication: a request without a key that authenticates can only be a
 * public `eth_chainId`, so what is read for it is bounded by `chainIdMaxBodyBytes` (512), and the
 * answer to one over that bound says what the request is (docs/design.md §3.5):
 * - no key at all (no X-Api-Key, or an empty one): 413 `payload_too_large`, saying that only an
 *   `eth_chainId` of at most the bound is served without a valid key;
 * - a key that does not authenticate: what the auth stage answers (401 `unauthorized`, or 503 while
 *   the accounts are not loaded or stale), whatever the size.
 * A declared body over the bound gets that answer before anything is read; a chunked one is read
 * up to the bound and gets the same answer when it goes past it. Bodies being read also share the
 * process-wide budget (body-budget.ts): beyond it, 503 `overloaded`, unread.
 */
import { authenticate } from '../accounts/keys.js';
import type { AccountStore } from '../accounts/types.js';
import { Exit, reject, FAIL } from '../base/errors.js';
import { fieldSetter, type BaseCtx, type Body, type BodyResult } from '../pipeline/context.js';
import { Later } from '../pipeline/later.js';
import type { Stage } from '../pipeline/pipeline.js';

const setBody = fieldSetter('body');

export function createSizeCapStage(
  limits: { readonly maxBodyBytes: number; readonly chainIdMaxBodyBytes: number },
  store: AccountStore,
): Stage<BaseCtx, { readonly body: Body }, 'size_cap'> {
  const cap = limits.maxBodyBytes;
  const publicCap = limits.chainIdMaxBodyBytes;
  const keyless = keylessOverCap(publicCap);
  const tooLarge = bodyCapExit(cap);
  const bodyRead = bodyReader(tooLarge);
  return {
    name: 'size_cap',
    about: 'the body, streamed with the cap enforced as chunks arrive (the declared size checked first; 512 bytes without a valid key)',
    reasons: ['payload_too_large', 'unauthorized', 'not_ready', 'credentials_stale', 'overloaded'],
    adds: 'body',
    run(ctx) {
      const declared = ctx.head.declaredBytes;
      // overBodyCap's rule, with this stage's Exit held (no lookup per request).
      if (declared > cap) return tooLarge;
      // Only a body that may pass the public cap costs a key lookup here (the auth stage looks again).
      if (declared >= 0 && declared <= publicCap) return readBody(ctx, cap, bodyRead);
      const apiKey = ctx.head.apiKey;
      const refusal = apiKey.length === 0 ? keyless : authenticate(store, apiKey);
      if (!(refusal instanceof Exit)) return readBody(ctx, cap, bodyRead);
      // Without a key that authenticates: refused unread when declared over the public cap, else
      // read up to it, and the same refusal when a chunked body goes past it.
      return declared > publicCap ? refusal : readPublic(ctx, publicCap, refusal, bodyRead);
    },
  };
}

/** The 413 for a request with no key whose body is over the public cap (declared or chunked). */
export function keylessOverCap(publicCap: number): Exit {
  return reject('payload_too_large', `Without a valid X-Api-Key only eth_chainId with a body of at most ${publicCap} bytes is served; this body is larger`);
}

/** Reads the body up to `limit`; a body past it is answered as `bodyRead` says (the cap's 413). */
function readBody<C extends BaseCtx>(ctx: C, limit: number, bodyRead: BodyRead) {
  const read = ctx.bodySource.read(limit);
  return read instanceof Later ? read.mapWith(bodyRead<C>, ctx) : read.then((body) => bodyRead(body, ctx));
}

/** Reads up to the public cap for a request without a key that authenticates: a body past it gets `refusal`. */
function readPublic<C extends BaseCtx>(ctx: C, limit: number, refusal: Exit, bodyRead: BodyRead) {
  // Off the hot path: a closure is fine here.
  return ctx.bodySource.read(limit).then((body: BodyResult) => (body === 'too_large' ? refusal : bodyRead(body, ctx)));
}

/** What a body read gives the pipeline: the context with its body, or the refusal. */
type BodyRead = <C extends BaseCtx>(body: BodyResult, ctx: C) => (C & { readonly body: Body }) | Exit;

/** The body reader of a stage (built once per stage, so a request makes no closure), `tooLarge` its cap's 413. */
function bodyReader(tooLarge: Exit): BodyRead {
  return (body, ctx) => (body === 'too_large' ? tooLarge : body === 'aborted' ? cutOff(ctx) : body === 'overloaded' ? OVER_BUDGET : setBody(ctx, body));
}

/** The body cap's 413, naming the cap and the setting (docs/clients.md), built once per cap. */
const CAP_EXITS = new Map<number, Exit>();
export function bodyCapExit(cap: number): Exit {
  let e = CAP_EXITS.get(cap);
  if (e === undefined) {
    e = reject('payload_too_large', `Request body exceeds the size limit of ${cap} bytes (limits.maxBodyBytes): send one transaction per request`, {
      limitBytes: cap,
      setting: 'limits.maxBodyBytes',
    });
    CAP_EXITS.set(cap, e);
  }
  return e;
}

/**
 * The body cap's refusal of a body of `bytes` (declared, or a whole WebSocket frame), else null:
 * the one rule, for this stage and for a front end that refuses a frame before the pipeline.
 */
export function overBodyCap(bytes: number, cap: number): Exit | null {
  return bytes > cap ? bodyCapExit(cap) : null;
}

/** Refused unread: the process-wide budget for bodies being read is spent. */
const OVER_BUDGET = reject('overloaded', 'Too many request bodies being read; the request was not read');

/**
 * The connection closed before the whole body arrived: the client left, or the body trickled
 * in past uWS's ~10-s timer. Nobody reads the answer; the log line says how far the body got.
 */
function cutOff(ctx: BaseCtx): Exit {
  const got = ctx.bodySource.received;
  if (got === undefined) return FAIL.client_closed;
  const declared = ctx.head.declaredBytes;
  const detail = declared >= 0 ? `connection closed after ${got} of ${declared} body bytes` : `connection closed after ${got} bytes of a chunked body`;
  return new Exit(FAIL.client_closed.status, 'client_closed', FAIL.client_closed.tail, undefined, detail);
}
