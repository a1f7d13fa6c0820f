/**
 * The method routing stage. It says what kind of send a request is (`send`: plain, or sync with
 * the wait it gets), so later stages never compare the method. eth_chainId is answered here from configuration (never upstream: it
 * is the clients' keep-alive and must stay cheap when the sequencer is slow); its whole body
 * must fit in 512 bytes. eth_sendRawTransaction needs exactly one param: a 0x-hex string. Two
 * other shapes pass on so that decode can name them precisely after auth: a JSON object
 * (an unsigned eth_sendTransaction-style object) and a base58/base64 string (Solana wire bytes).
 */
import { reject, REJECT } from '../base/errors.js';
import type { ChainRuntime } from '../config/chains.js';
import { fieldSetter, type BaseCtx, type Body, type RpcRequest } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';
import { PLAIN_SEND, requestedWaitMs, type Send } from '../rpc/send-kind.js';
import {
  CHAIN_ID_METHOD,
  CONDITIONAL_METHOD,
  STATUS_SUBSCRIBE_METHOD,
  STATUS_UNSUBSCRIBE_METHOD,
  SEND_METHOD,
  STATUS_METHOD,
  SYNC_METHOD,
} from '../rpc/rpc-methods.js';

const setRawTx = fieldSetter('rawTx');
const setSend = fieldSetter('send');
const setStatusOf = fieldSetter('statusOf');

/** 0x and hex digits; the even length is checked apart (a plain character class runs faster than pairs, measured). */
const HEX = /^0[xX][0-9a-fA-F]*$/;
const BASE58_OR_64 = /^[A-Za-z0-9+/]+={0,2}$|^[A-Za-z0-9_-]+={0,2}$/;

/** rawTx: a validated 0x-hex string, or (for decode to name precisely) an object or a base58/64 string. */
export type RawTxParam = string | Readonly<Record<string, unknown>>;

/** What decode receives: a validated 0x-hex string, a JSON object, or a base58/base64 string. */
export function classifyRawTxParam(p: unknown): RawTxParam | undefined {
  if (typeof p === 'string') {
    if (p.charCodeAt(0) === 48 && (p.charCodeAt(1) === 120 || p.charCodeAt(1) === 88)) return (p.length & 1) === 0 && HEX.test(p) ? p : undefined;
    return p.length >= 64 && BASE58_OR_64.test(p) ? p : undefined;
  }
  if (typeof p === 'object' && p !== null && !Array.isArray(p)) return p as Record<string, unknown>;
  return undefined;
}

/** A param the parse stage found to be 0x and hex digits: whole bytes, or refused (as classifyRawTxParam would). */
function evenHex(p: string): string | undefined {
  return (p.length & 1) === 0 ? p : undefined;
}

/** Also what decode answers for a string that is neither hex nor a Solana transaction. */
export const BAD_SEND_PARAMS = reject('invalid_params', 'Invalid params: eth_sendRawTransaction takes exactly one 0x-prefixed hex string');
const BAD_CHAINID_PARAMS = reject('invalid_params', 'Invalid params: eth_chainId takes no params');
const BAD_STATUS_PARAMS = reject('invalid_params', 'Invalid params: txgate_getTransactionStatus takes exactly one transaction hash (0x and 64 hex digits)');
/** A transaction hash: 0x and 64 hex digits. */
const TX_HASH = /^0[xX][0-9a-fA-F]{64}$/;
/**
 * A method of an extension the chain leaves off: method_not_found, naming the setting that turns
 * it on (docs/operations.md "Extensions"), for HTTP and the WebSocket transport alike.
 */
const SYNC_OFF = reject(
  'method_not_found',
  'Method not found: eth_sendRawTransactionSync is off on this chain (the deployment turns it on with chains[].sync.enabled)',
);
const STATUS_OFF = reject(
  'method_not_found',
  'Method not found: txgate_getTransactionStatus is off on this chain (the deployment turns it on with chains[].track.enabled)',
);
/** The WebSocket transport's subscriptions reach the pipeline only where they are not served: over HTTP, or on a chain that does not track. */
const SUBSCRIBE_OFF = reject(
  'method_not_found',
  'Method not found: txgate_subscribe and txgate_unsubscribe are served on the WebSocket transport of a chain that tracks (chains[].track.enabled, websocket.enabled)',
);
const CONDITIONAL_OFF = reject(
  'method_not_found',
  'Method not found: eth_sendRawTransactionConditional is off on this chain (the deployment turns it on with chains[].conditional.enabled)',
);
const BAD_CONDITIONAL_PARAMS = reject(
  'invalid_params',
  'Invalid params: eth_sendRawTransactionConditional takes one 0x-prefixed hex string, then its options (an object)',
);
const BAD_SYNC_PARAMS = reject(
  'invalid_params',
  'Invalid params: eth_sendRawTransactionSync takes one 0x-prefixed hex string, then optionally a timeout in ms (a positive integer or 0x-hex)',
);

const BAD_SYNC_UNTIL = reject(
  'invalid_params',
  'Invalid params: on this chain eth_sendRawTransactionSync takes a third param, "preconfirmed" (answered at the flashblock, the default) or "sealed" (answered with the sealed block\'s receipt)',
);

export function createRouteStage(limits: {
  readonly chainIdMaxBodyBytes: number;
}): Stage<
  BaseCtx & { readonly chain: ChainRuntime; readonly body: Body; readonly rpc: RpcRequest },
  { readonly rawTx: RawTxParam; readonly send: Send; readonly statusOf?: string | undefined },
  'route'
> {
  const chainIdCap = limits.chainIdMaxBodyBytes;
  const chainIdTooLarge = reject('payload_too_large', `Request body exceeds the size limit: eth_chainId requests must fit in ${chainIdCap} bytes`);
  return {
    name: 'route',
    about: "the method: `eth_chainId` is answered here from configuration; a send's one param is passed on",
    reasons: ['ok', 'payload_too_large', 'method_not_found', 'invalid_params'],
    adds: ['rawTx', 'send', 'statusOf'],
    run(ctx) {
      const { method, params } = ctx.rpc;
      if (method === SEND_METHOD) {
        if (params.length !== 1) return BAD_SEND_PARAMS;
        const raw = ctx.rpc.paramsHex ? evenHex(params[0] as string) : classifyRawTxParam(params[0]);
        return raw === undefined ? BAD_SEND_PARAMS : setSend(setRawTx(ctx, raw), PLAIN_SEND);
      }
      if (method === CHAIN_ID_METHOD) {
        if (ctx.body.bytes > chainIdCap) return chainIdTooLarge;
        if (params.length !== 0) return BAD_CHAINID_PARAMS;
        return ctx.chain.chainIdAnswer;
      }
      if (method === SYNC_METHOD && ctx.chain.config.sync.enabled) {
        // Where the chain turns it on (off: method_not_found, as any method not served).
        const n = params.length;
        // A third param only on a chain with flashblocks: "sealed" (the sealed block's receipt) or "preconfirmed" (the default).
        const until = n === 3 && ctx.chain.config.flashblocks.enabled ? params[2] : undefined;
        if (n < 1 || (n > 2 && until === undefined)) return BAD_SYNC_PARAMS;
        if (until !== undefined && until !== 'sealed' && until !== 'preconfirmed') return BAD_SYNC_UNTIL;
        const raw = ctx.rpc.paramsHex ? evenHex(params[0] as string) : classifyRawTxParam(params[0]);
        const waitMs = requestedWaitMs(params[1], ctx.chain.config.sync.maxWaitMs);
        if (raw === undefined || waitMs === undefined) return BAD_SYNC_PARAMS;
        return setSend(setRawTx(ctx, raw), (until === 'sealed' ? { kind: 'sync', waitMs, sealed: true } : { kind: 'sync', waitMs }) as Send);
      }
      if (method === STATUS_METHOD && ctx.chain.config.track.enabled) {
        // Where the chain tracks (off: method_not_found); answered by the status stage, once the
        // account is known and granted. Its own field: no transaction bytes (`rawTx` stays unset).
        const h = params.length === 1 ? params[0] : undefined;
        if (typeof h !== 'string' || !TX_HASH.test(h)) return BAD_STATUS_PARAMS;
        return setStatusOf(setSend(ctx, PLAIN_SEND), '0x' + h.slice(2).toLowerCase()) as typeof ctx & {
          readonly rawTx: RawTxParam;
          readonly send: Send;
          readonly statusOf: string;
        };
      }
      if (method === CONDITIONAL_METHOD && ctx.chain.config.conditional.enabled) {
        // Where the chain turns it on (off: method_not_found); the options are read by the conditions stage.
        const raw = params.length === 2 ? classifyRawTxParam(params[0]) : undefined;
        if (raw === undefined) return BAD_CONDITIONAL_PARAMS;
        return setSend(setRawTx(ctx, raw), { kind: 'conditional', options: params[1] } as Send);
      }
      if (method === SYNC_METHOD) return SYNC_OFF;
      if (method === STATUS_METHOD) return STATUS_OFF;
      if (method === CONDITIONAL_METHOD) return CONDITIONAL_OFF;
      if (method === STATUS_SUBSCRIBE_METHOD || method === STATUS_UNSUBSCRIBE_METHOD) return SUBSCRIBE_OFF;
      return REJECT.method_not_found;
    },
  };
}
