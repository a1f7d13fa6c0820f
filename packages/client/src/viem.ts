/**
 * `txgate-client/viem`: a viem transport that sends `eth_chainId` and `eth_sendRawTransaction` to txgate
 * (with the API key, one request per POST, no blind retries) and every other method to the
 * chain's RPC, so `walletClient.sendTransaction`, `sendRawTransaction` and
 * `waitForTransactionReceipt` work unmodified; `sendRawTransactionSync` and `sendTransactionSync`
 * (EIP-7966) go to txgate too, where the deployment and the account's grant serve them.
 *
 * A submission's outcome is settled before viem sees it: an uncertain answer (timeout, 502, a
 * lost connection) is looked up on the chain RPC by the locally computed hash, and only the
 * exact same bytes are resent, so viem is never told "failed" for a transaction that went
 * through. A refusal is thrown as a viem `BaseError` subclass naming the reason and what to do
 * (errors-viem.ts), whose cause chain holds txgate's JSON-RPC error (`data.reason`);
 * `txgateReason(error)` reads it. `transport.close()` (or `client.transport.close()`) ends the
 * connection to txgate; an idle one never keeps the process alive.
 */
import { createTransport, http, type EIP1193RequestFn, type Transport } from 'viem';
import { viemErrorOf } from './errors-viem.js';
import { caOf, NO_ANSWER, Submitter, type ChainResult } from './submitter.js';
import { openLink } from './link.js';
import { rpcError } from './outcomes.js';
import { failedError } from './refusal.js';

export interface TxgateTransportOptions {
  /** txgate's base URL: http(s)://, or ws(s):// for the WebSocket transport. */
  readonly url: string;
  readonly apiKey: string;
  /** The chain RPC: its URL, or a viem transport. */
  readonly rpc: string | Transport;
  /** Connection and whole-call bounds, default 3,000 and 10,000 ms (the spec's starting values). */
  readonly connectTimeoutMs?: number;
  readonly timeoutMs?: number;
  /** PEM certificate(s) of the CA to trust for https:// and wss:// (a private deployment's own CA), instead of the system's. */
  readonly ca?: string | Buffer;
  /** Resends of the same bytes while the outcome is uncertain or not forwarded, default 3. */
  readonly maxResends?: number;
}

/** What the transport adds to a client's `transport`: `close()` ends its connection to txgate. */
export interface TxgateTransportValue {
  close(): Promise<void>;
}

/** The transport; `close()` on it (or on a client's `transport`) ends the connection to txgate. */
export type TxgateTransport = Transport<'txgate', TxgateTransportValue> & TxgateTransportValue;

export function txgate(o: TxgateTransportOptions): TxgateTransport {
  const gate = openLink(o.url, o.apiKey, { connectTimeoutMs: o.connectTimeoutMs ?? 3_000, timeoutMs: o.timeoutMs ?? 10_000, ...caOf(o) });
  const value: TxgateTransportValue = { close: () => gate.close() };
  const transport: Transport<'txgate', TxgateTransportValue> = (params) => {
    const chain = (typeof o.rpc === 'string' ? http(o.rpc) : o.rpc)(params);
    const chainResult: ChainResult = async (method, p) => {
      try {
        return await chain.request({ method, params: p } as never);
      } catch {
        return NO_ANSWER;
      }
    };
    const submitter = new Submitter(gate, chainResult);
    const request = (async (args: { method: string; params?: unknown }) => {
      const { method } = args;
      const p = (args.params ?? []) as unknown[];
      if (method === 'eth_chainId') {
        const a = await gate.call('eth_chainId', [], false);
        if (a.kind === 'result') return a.result;
        throw refusal(o.url, method, p, a.kind === 'error' ? a : failedError(a));
      }
      if (method === 'eth_sendRawTransactionSync' || method === 'eth_sendRawTransactionConditional') {
        // viem's sendRawTransactionSync / sendTransactionSync: the receipt in one call where
        // txgate serves it (the deployment and the grant); viem formats the receipt. And
        // client.request({ method: 'eth_sendRawTransactionConditional', params: [signed, options] })
        // (docs/conditional.md): the hash, or the refusal (-32003/-32005) as a TxgateRejectedError. Not
        // resent: a failure in transit throws with data.reason 'uncertain' and data.txHash
        // unknown to viem; look the hash up on the chain RPC before building a replacement.
        const a = await gate.call(method, p, true);
        if (a.kind === 'result') return a.result;
        throw refusal(o.url, method, p, a.kind === 'error' ? a : failedError(a));
      }
      if (method !== 'eth_sendRawTransaction') return chain.request(args as never);
      const out = await submitter.settle(String(p[0]), {
        maxResends: o.maxResends ?? 3,
        maxUnsentResends: o.maxResends ?? 3,
        deadline: performance.now() + (o.timeoutMs ?? 10_000) * 3,
      });
      if (out.kind === 'accepted') return out.hash;
      throw refusal(o.url, method, p, rpcError(out));
    }) as EIP1193RequestFn;
    // retryCount 0: a refusal is never retried blindly (outcomes are settled above).
    return createTransport({ key: 'txgate', name: 'txgate', type: 'txgate', request, retryCount: 0 }, value);
  };
  return Object.assign(transport, value);
}

const refusal = viemErrorOf;

/** txgate's `data.reason` from an error viem threw (anywhere in its cause chain, whatever copy of viem made it), or undefined. */
export { txgateReason } from './reason.js';
export { TxgateNotSentError, TxgatePendingError, TxgateRateLimitedError, TxgateRejectedError, TxgateRpcError, TxgateUncertainError } from './errors-viem.js';
