/**
 * The parse stage: exactly one JSON-RPC 2.0 request object (DESIGN §4, spec §2).
 * Content-Type application/json; a batch is refused; `jsonrpc` "2.0"; `id` a number or a
 * string (null or absent is invalid); `method` a string; `params` an array (absent = []).
 */
import { attempt } from '../attempt.js';
import { reject, REJECT } from '../errors.js';
import { enrich, type BaseCtx, type Body, type RpcRequest } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';

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
      // No stack trace for the SyntaxError (attempt.ts): malformed bodies need no key.
      const msg = attempt(JSON.parse, ctx.body.text);
      if (msg instanceof Error) return REJECT.parse_error;
      if (typeof msg !== 'object' || msg === null) return REJECT.invalid_request;
      if (Array.isArray(msg)) return REJECT.batch_not_supported;
      const m = msg as Record<string, unknown>;
      const id = m.id;
      if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) {
        // JSON-RPC 2.0: the response carries the same id. A number JSON.parse cannot hold
        // exactly (an integer beyond 2^53, such as a nanosecond timestamp or a random u64) is
        // echoed as the client wrote it, not as the double it became.
        ctx.idJson = typeof id === 'number' && !Number.isSafeInteger(id) ? (idLiteral(ctx.body.text) ?? JSON.stringify(id)) : JSON.stringify(id);
      } else
        return id === undefined || id === null
          ? reject('invalid_request', 'Invalid request: id is required and must be a number or a string')
          : REJECT.invalid_request;
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

/**
 * The source text of the top-level `"id"` member's value in a document JSON.parse accepted (the
 * last one, as JSON.parse keeps the last of duplicate keys), or undefined. Walks the top-level
 * object only, skipping nested values, so an "id" inside params or a string never matches.
 */
export function idLiteral(text: string): string | undefined {
  let i = text.indexOf('{') + 1;
  let found: string | undefined;
  const n = text.length;
  const ws = () => {
    while (i < n && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9 || text.charCodeAt(i) === 10 || text.charCodeAt(i) === 13)) i++;
  };
  const stringEnd = (from: number) => {
    let j = from + 1; // after the opening quote
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c === 92)
        j += 2; // backslash: skip the escaped character
      else if (c === 34) return j + 1;
      else j++;
    }
    return n;
  };
  const valueEnd = (from: number) => {
    const c = text.charCodeAt(from);
    if (c === 34) return stringEnd(from);
    if (c === 123 || c === 91) {
      let depth = 0;
      let j = from;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === 34) {
          j = stringEnd(j);
          continue;
        }
        if (d === 123 || d === 91) depth++;
        else if ((d === 125 || d === 93) && --depth === 0) return j + 1;
        j++;
      }
      return n;
    }
    let j = from; // number or literal: up to the next delimiter
    while (j < n) {
      const d = text.charCodeAt(j);
      if (d === 44 || d === 125 || d === 32 || d === 9 || d === 10 || d === 13) break;
      j++;
    }
    return j;
  };
  for (;;) {
    ws();
    if (i >= n || text.charCodeAt(i) !== 34) return found;
    const keyEnd = stringEnd(i);
    const rawKey = text.slice(i, keyEnd);
    const key = rawKey.includes('\\') ? (JSON.parse(rawKey) as string) : rawKey.slice(1, -1);
    i = keyEnd;
    ws();
    i++; // the colon
    ws();
    const end = valueEnd(i);
    if (key === 'id') found = text.slice(i, end);
    i = end;
    ws();
    if (text.charCodeAt(i) !== 44) return found; // not a comma: the object ends
    i++;
  }
}
