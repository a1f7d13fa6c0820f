/**
 * The parse stage: exactly one JSON-RPC 2.0 request object (docs/design.md §3.6).
 * Content-Type application/json; a batch is refused; `jsonrpc` "2.0"; `id` a number or a
 * string (null or absent is invalid); `method` a string; `params` an array (absent = []).
 */
import { orError } from '../or-error.js';
import { reject, REJECT } from '../errors.js';
import { fieldSetter, type BaseCtx, type Body, type RpcRequest } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';
import { idJsonOf, validId } from '../rpc-id.js';

const setRpc = fieldSetter('rpc');

export { idLiteral } from '../rpc-id.js';

const NO_PARAMS: readonly unknown[] = Object.freeze([]);

export function createParseStage(): Stage<BaseCtx & { readonly body: Body }, { readonly rpc: RpcRequest }, 'parse'> {
  return {
    name: 'parse',
    about: 'one JSON-RPC 2.0 object: jsonrpc "2.0", a non-null id, a string method, an array params',
    setsId: true,
    reasons: ['unsupported_content_type', 'parse_error', 'invalid_request', 'batch_not_supported'],
    adds: 'rpc',
    run(ctx) {
      if (!ctx.head.json) return REJECT.unsupported_content_type;
      // No stack trace for the SyntaxError (or-error.ts): malformed bodies need no key.
      const msg = orError(JSON.parse, ctx.body.text);
      if (msg instanceof Error) return REJECT.parse_error;
      if (typeof msg !== 'object' || msg === null) return REJECT.invalid_request;
      if (Array.isArray(msg)) return REJECT.batch_not_supported;
      const m = msg as Record<string, unknown>;
      const id = m.id;
      // JSON-RPC 2.0: the response carries the same id, as the JSON text it arrived as (rpc-id.ts).
      if (validId(id)) ctx.idJson = idJsonOf(ctx.body.text, id);
      else
        return id === undefined || id === null
          ? reject('invalid_request', 'Invalid request: id is required and must be a number or a string')
          : REJECT.invalid_request;
      if (m.jsonrpc !== '2.0') return reject('invalid_request', 'Invalid request: jsonrpc must be "2.0"');
      const method = m.method;
      if (typeof method !== 'string') return reject('invalid_request', 'Invalid request: method must be a string');
      // JSON-RPC 2.0 §4 lets a client omit params (viem does for eth_chainId): absent means [].
      const params = m.params === undefined ? NO_PARAMS : m.params;
      if (!Array.isArray(params)) return reject('invalid_request', 'Invalid request: params must be an array');
      return setRpc(ctx, { id, idJson: ctx.idJson, method, params });
    },
  };
}
