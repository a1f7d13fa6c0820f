/**
 * The parse stage: exactly one JSON-RPC 2.0 request object (docs/design.md §3.6).
 * Content-Type application/json; a batch is refused; `jsonrpc` "2.0"; `id` a number or a
 * string (null or absent is invalid); `method` a string; `params` an array (absent = []). The
 * plain shape clients send is read without JSON.parse (rpc-scan.ts), to the same result.
 */
import { orError } from '../base/or-error.js';
import { type Exit, reject, REJECT } from '../base/errors.js';
import { fieldSetter, type BaseCtx, type Body, type RpcRequest } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';
import { idJsonOf, validId } from '../rpc/rpc-id.js';
import { scanRequest } from '../rpc/rpc-scan.js';

const setRpc = fieldSetter('rpc');

const NO_PARAMS: readonly unknown[] = Object.freeze([]);

/** A body the JSON.parse path refuses: the answer, and the id it echoes ('null' when none was valid). */
export interface Refused {
  readonly exit: Exit;
  readonly idJson: string;
}

/**
 * The request in `text` by JSON.parse, with the envelope's rules; the plain shape clients send
 * is read by scanRequest first (rpc-scan.ts), which gives what this gives, without the parse.
 */
export function readRequest(text: string): RpcRequest | Refused {
  // No stack trace for the SyntaxError (or-error.ts): malformed bodies need no key.
  const msg = orError(JSON.parse, text);
  if (msg instanceof Error) return { exit: REJECT.parse_error, idJson: 'null' };
  if (typeof msg !== 'object' || msg === null) return { exit: REJECT.invalid_request, idJson: 'null' };
  if (Array.isArray(msg)) return { exit: REJECT.batch_not_supported, idJson: 'null' };
  const m = msg as Record<string, unknown>;
  const id = m.id;
  if (!validId(id))
    return {
      exit:
        id === undefined || id === null
          ? reject('invalid_request', 'Invalid request: id is required and must be a number or a string')
          : REJECT.invalid_request,
      idJson: 'null',
    };
  // JSON-RPC 2.0: the response carries the same id, as the JSON text it arrived as (rpc-id.ts).
  const idJson = idJsonOf(text, id);
  if (m.jsonrpc !== '2.0') return { exit: reject('invalid_request', 'Invalid request: jsonrpc must be "2.0"'), idJson };
  const method = m.method;
  if (typeof method !== 'string') return { exit: reject('invalid_request', 'Invalid request: method must be a string'), idJson };
  // JSON-RPC 2.0 §4 lets a client omit params (viem does for eth_chainId): absent means [].
  const params = m.params === undefined ? NO_PARAMS : m.params;
  if (!Array.isArray(params)) return { exit: reject('invalid_request', 'Invalid request: params must be an array'), idJson };
  return { id, idJson, method, params, paramsHex: false };
}

export function createParseStage(): Stage<BaseCtx & { readonly body: Body }, { readonly rpc: RpcRequest }, 'parse'> {
  return {
    name: 'parse',
    about: 'one JSON-RPC 2.0 object: jsonrpc "2.0", a non-null id, a string method, an array params',
    setsId: true,
    reasons: ['unsupported_content_type', 'parse_error', 'invalid_request', 'batch_not_supported'],
    adds: 'rpc',
    run(ctx) {
      if (!ctx.head.json) return REJECT.unsupported_content_type;
      const text = ctx.body.text;
      const r = scanRequest(text) ?? readRequest(text);
      ctx.idJson = r.idJson;
      return 'exit' in r ? r.exit : setRpc(ctx, r);
    },
  };
}
