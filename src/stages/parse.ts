/**
 * Stage 2, parse: exactly one JSON-RPC 2.0 request object (DESIGN §4, spec §2).
 * Content-Type application/json; a batch is refused; `jsonrpc` "2.0"; `id` a number or a
 * string (null or absent is invalid); `method` a string; `params` an array (absent = []).
 */
import { reject, REJECT } from '../errors.js';
import { enrich, type ParsedCtx, type SizedCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';

/** application/json, optionally with parameters (`; charset=utf-8`), case-insensitive. */
export function isJsonContentType(ct: string): boolean {
  if (ct === 'application/json') return true;
  const semi = ct.indexOf(';');
  return (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase() === 'application/json';
}

const NO_PARAMS: readonly unknown[] = Object.freeze([]);

export function createParseStage(): Stage<SizedCtx, ParsedCtx> {
  return {
    name: 'parse',
    run(ctx) {
      if (!isJsonContentType(ctx.head.contentType)) return REJECT.unsupported_content_type;
      let msg: unknown;
      try {
        msg = JSON.parse(ctx.body.text);
      } catch {
        return REJECT.parse_error;
      }
      if (typeof msg !== 'object' || msg === null) return REJECT.invalid_request;
      if (Array.isArray(msg)) return REJECT.batch_not_supported;
      const m = msg as Record<string, unknown>;
      const id = m.id;
      if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) ctx.idJson = JSON.stringify(id);
      else return id === undefined || id === null ? reject('invalid_request', 'Invalid request: id is required and must be a number or a string') : REJECT.invalid_request;
      if (m.jsonrpc !== '2.0') return reject('invalid_request', 'Invalid request: jsonrpc must be "2.0"');
      const method = m.method;
      if (typeof method !== 'string') return reject('invalid_request', 'Invalid request: method must be a string');
      // JSON-RPC 2.0 §4 lets a client omit params (viem does for eth_chainId): absent means [].
      const params = m.params === undefined ? NO_PARAMS : m.params;
      if (!Array.isArray(params)) return reject('invalid_request', 'Invalid request: params must be an array');
      return enrich(ctx, 'rpc', { id, idJson: ctx.idJson, method, params });
    },
  };
}
