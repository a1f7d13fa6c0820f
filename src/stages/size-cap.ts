/**
 * Stage 1, size cap: a declared Content-Length over the cap is refused before anything is read;
 * otherwise the body is read as it arrives and reading stops at the cap (chunked bodies too).
 */
import { REJECT } from '../errors.js';
import { enrich, type HostCtx, type SizedCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';

export function createSizeCapStage(limits: { readonly maxBodyBytes: number }): Stage<HostCtx, SizedCtx> {
  const cap = limits.maxBodyBytes;
  return {
    name: 'size_cap',
    run(ctx) {
      if (ctx.head.contentLength > cap) return REJECT.payload_too_large;
      return ctx.bodySource.read(cap).then((body) =>
        body === 'too_large' ? REJECT.payload_too_large : body === 'aborted' ? REJECT.client_closed : enrich(ctx, 'body', body));
    },
  };
}
