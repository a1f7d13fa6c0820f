/**
 * The size cap stage: a declared Content-Length over the cap is refused before anything is read;
 * otherwise the body is read as it arrives and reading stops at the cap (chunked bodies too).
 */
import { Exit, REJECT } from '../errors.js';
import { enrich, type BaseCtx, type Body } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';

export function createSizeCapStage(limits: { readonly maxBodyBytes: number }): Stage<BaseCtx, { readonly body: Body }, 'size_cap'> {
  const cap = limits.maxBodyBytes;
  return {
    name: 'size_cap',
    about: 'the body, streamed with the cap enforced as chunks arrive (the declared size checked first)',
    reasons: ['payload_too_large'],
    adds: 'body',
    run(ctx) {
      if (ctx.head.declaredBytes > cap) return REJECT.payload_too_large;
      return ctx.bodySource
        .read(cap)
        .then((body) => (body === 'too_large' ? REJECT.payload_too_large : body === 'aborted' ? cutOff(ctx) : enrich(ctx, 'body', body)));
    },
  };
}

/**
 * The connection closed before the whole body arrived: the client left, or the body trickled
 * in past uWS's ~10-s timer. Nobody reads the answer; the log line says how far the body got.
 */
function cutOff(ctx: BaseCtx): Exit {
  const got = ctx.bodySource.received;
  if (got === undefined) return REJECT.client_closed;
  const declared = ctx.head.declaredBytes;
  const detail = declared >= 0 ? `connection closed after ${got} of ${declared} body bytes` : `connection closed after ${got} bytes of a chunked body`;
  return new Exit(REJECT.client_closed.status, 'client_closed', REJECT.client_closed.tail, undefined, detail);
}
