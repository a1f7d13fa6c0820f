/**
 * `txgate-client/ethers`: an ethers v6 provider that sends `eth_chainId` and `eth_sendRawTransaction` to
 * txgate (with the API key, one request per POST) and every other method to the chain's RPC, so
 * `wallet.sendTransaction`, `provider.broadcastTransaction` (which asks for the block number
 * beside the submission) and `tx.wait()` work unmodified.
 *
 * A submission's outcome is settled before ethers sees it: an uncertain answer is looked up on
 * the chain RPC by the locally computed hash, and only the exact same bytes are resent, so
 * ethers is never told "failed" for a transaction that went through. A refusal is thrown as an
 * ethers error with the code an ethers program handles and txgate's reason on it
 * (errors-ethers.ts); `txgateReason(error)` reads it too. `close()` (or ethers' `destroy()`)
 * ends its connections; an idle one never keeps the process alive.
 */
import { JsonRpcProvider, Network, type JsonRpcError, type JsonRpcPayload, type JsonRpcResult } from 'ethers';
import { ethersErrorOf } from './errors-ethers.js';
import { httpUrlOf, openLink } from './link.js';
import type { RpcLink } from './rpc-link.js';
import type { SubmitOutcome, SyncOutcome } from './submission.js';
import { caOf, NO_ANSWER, Submitter } from './submitter.js';
import { rpcError } from './outcomes.js';
import { failedError } from './refusal.js';

/** Anything that answers JSON-RPC reads (an ethers JsonRpcProvider, BrowserProvider, …). */
export interface ChainRpc {
  send(method: string, params: unknown[] | Record<string, unknown>): Promise<unknown>;
}

export interface TxgateProviderOptions {
  /** txgate's base URL: http(s)://, or ws(s):// for the WebSocket transport. */
  readonly url: string;
  readonly apiKey: string;
  /** The chain RPC: its URL, or an ethers provider. */
  readonly rpc: string | ChainRpc;
  /** The chain id, when known: no network detection round trip. */
  readonly chainId?: number;
  /** Connection and whole-call bounds, default 3,000 and 10,000 ms (the spec's starting values). */
  readonly connectTimeoutMs?: number;
  readonly timeoutMs?: number;
  /** PEM certificate(s) of the CA to trust for https:// and wss:// (a private deployment's own CA), instead of the system's. */
  readonly ca?: string | Buffer;
  /** Resends of the same bytes while the outcome is uncertain or not forwarded, default 3. */
  readonly maxResends?: number;
  /** How often ethers polls the chain RPC for new blocks (tx.wait()), default 1,000 ms. */
  readonly pollingInterval?: number;
}

export class TxgateProvider extends JsonRpcProvider {
  private readonly gate: RpcLink;
  private readonly chain: ChainRpc;
  private readonly submitter: Submitter;
  /** The options without the key (the link holds it privately): util.inspect and console.log of the provider never show it. */
  private readonly opts: Omit<TxgateProviderOptions, 'apiKey'>;

  constructor(o: TxgateProviderOptions) {
    const network = o.chainId !== undefined ? Network.from(o.chainId) : undefined;
    // One request per POST (txgate refuses batches); a known chain id is not asked for again.
    super(httpUrlOf(o.url), network, {
      batchMaxCount: 1,
      ...(network !== undefined ? { staticNetwork: network } : {}),
      pollingInterval: o.pollingInterval ?? 1_000,
    });
    const { apiKey: _key, ...opts } = o;
    this.opts = opts;
    this.gate = openLink(o.url, o.apiKey, { connectTimeoutMs: o.connectTimeoutMs ?? 3_000, timeoutMs: o.timeoutMs ?? 10_000, ...caOf(o) });
    this.chain =
      typeof o.rpc === 'string'
        ? new JsonRpcProvider(o.rpc, network, { batchMaxCount: 1, ...(network !== undefined ? { staticNetwork: network } : {}) })
        : o.rpc;
    this.submitter = new Submitter(this.gate, async (method, params) => {
      try {
        return await this.chain.send(method, [...params]);
      } catch {
        return NO_ANSWER;
      }
    });
  }

  // ethers reads a JSON-RPC error object from this list too (its declared type says results only).
  override async _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    const list = Array.isArray(payload) ? payload : [payload];
    return (await Promise.all(list.map((p) => this.one(p)))) as JsonRpcResult[];
  }

  private async one(p: JsonRpcPayload): Promise<JsonRpcResult | JsonRpcError> {
    const params = (Array.isArray(p.params) ? p.params : []) as unknown[];
    if (p.method === 'eth_chainId') {
      const a = await this.gate.call('eth_chainId', [], false);
      if (a.kind === 'result') return { id: p.id, result: a.result };
      return {
        id: p.id,
        error: a.kind === 'error' ? { code: a.code, message: a.message, data: a.data } : failedError(a),
      };
    }
    if (p.method === 'eth_sendRawTransaction') {
      const deadline = performance.now() + (this.opts.timeoutMs ?? 10_000) * 3;
      return answer(
        p.id,
        await this.submitter.settle(String(params[0]), { maxResends: this.opts.maxResends ?? 3, maxUnsentResends: this.opts.maxResends ?? 3, deadline }),
      );
    }
    if (p.method === 'eth_sendRawTransactionSync' || p.method === 'eth_sendRawTransactionConditional') {
      // provider.send('eth_sendRawTransactionSync', [signed, timeoutMs?]): the receipt (JSON) in one call;
      // provider.send('eth_sendRawTransactionConditional', [signed, options]): the hash, or the refusal as an ethers error.
      const a = await this.gate.call(p.method, params, true);
      if (a.kind === 'result') return { id: p.id, result: a.result };
      return {
        id: p.id,
        error: a.kind === 'error' ? { code: a.code, message: a.message, data: a.data } : failedError(a),
      };
    }
    try {
      return { id: p.id, result: await this.chain.send(p.method, params) };
    } catch (e) {
      const inner = (e as { error?: { code?: unknown; message?: unknown; data?: unknown } }).error;
      if (inner !== undefined && typeof inner.code === 'number')
        return { id: p.id, error: { code: inner.code, message: String(inner.message ?? ''), data: inner.data } };
      return { id: p.id, error: { code: -32603, message: (e as Error).message } };
    }
  }

  /**
   * eth_sendRawTransactionSync (EIP-7966) where the deployment and the grant serve it: the
   * outcome as the kit's `submitSync` gives it (`executed` with the receipt as the chain gave
   * it, `pending` with the hash, or a submit outcome); never thrown.
   */
  async submitSync(signedTx: string, o: { maxWaitMs?: number } = {}): Promise<SyncOutcome> {
    return this.submitter.submitSync(signedTx, o.maxWaitMs);
  }

  /** txgate's refusals as ethers errors (errors-ethers.ts); any other error as ethers reads it. */
  override getRpcError(payload: JsonRpcPayload, error: JsonRpcError): Error {
    return ethersErrorOf(payload, error.error) ?? super.getRpcError(payload, error);
  }

  override destroy(): void {
    void this.close();
  }

  /** Ends the provider and its connections (ethers' `destroy()`, awaited until txgate's connection is closed). */
  async close(): Promise<void> {
    if (!this.destroyed) super.destroy();
    if (typeof this.opts.rpc === 'string' && !(this.chain as JsonRpcProvider).destroyed) (this.chain as JsonRpcProvider).destroy();
    await this.gate.close();
  }
}

function answer(id: number, out: SubmitOutcome): JsonRpcResult | JsonRpcError {
  if (out.kind === 'accepted') return { id, result: out.hash };
  const { code, message, data } = rpcError(out);
  return { id, error: { code, message, data } };
}

/** txgate's `data.reason` from an error ethers threw (anywhere in its cause chain), or undefined. */
export { txgateReason } from './reason.js';
export { ETHERS_CODES, ethersCodeOf } from './errors-ethers.js';
