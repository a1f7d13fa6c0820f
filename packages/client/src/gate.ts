/**
 * The spec's client flow as a library (docs/design.md §1.4): check the chain id, submit
 * signed bytes and get a definite outcome, resolve an uncertain one by the receipt of the hash
 * computed locally, resend only the exact same bytes, and poll the chain RPC (never txgate) for
 * the receipt with bounded backoff. It never signs anything, so it can never create a second
 * transaction.
 */
import { HttpClient, rpcCall, type RpcAnswer } from './http.js';
import { openLinks } from './link.js';
import type { RpcLink } from './rpc-link.js';
import { EdgeStatus, finalOnEdge, type TxStatus, type WatchOptions } from './status.js';
import { type Receipt, type SubmitOutcome, type SyncOutcome, TxgateError, type WaitOutcome } from './submission.js';
import { caOf, type ConditionalOptions, jitter, NO_ANSWER, sleep, Submitter } from './submitter.js';

export interface TxgateOptions {
  /**
   * txgate's base URL (the hostname assigned at onboarding): http(s):// for one request per POST,
   * or ws(s):// for the WebSocket transport where the deployment runs it (one connection, many in flight).
   */
  readonly url: string;
  /** The account's API key (sent as X-Api-Key; load it from a secret manager). */
  readonly apiKey: string;
  /** The chain id expected from eth_chainId: a mismatch stops here. */
  readonly chainId: number;
  /** The chain's own RPC (receipts; nonce, gas and fees for building transactions). */
  readonly chainRpcUrl: string;
  /** Connection bound, default 3,000 ms (the spec's starting value). */
  readonly connectTimeoutMs?: number;
  /** Whole-call bound, default 10,000 ms (the spec's starting value). */
  readonly timeoutMs?: number;
  /** PEM certificate(s) of the CA to trust for https:// and wss:// (a private deployment's own CA), instead of the system's. */
  readonly ca?: string | Buffer;
  /** Ping (eth_chainId) when no call went out for this long, default 5,000 ms; 0 turns it off. */
  readonly keepAliveMs?: number;
}

export interface WaitOptions {
  /** Blocks including the receipt's own, default 1. */
  readonly confirmations?: number;
  /** Overall bound, default 60,000 ms. */
  readonly timeoutMs?: number;
  /**
   * Resends of the same bytes after an uncertain answer, default 5 (then the receipt decides).
   * After rate_limited (waits retryAfterMs) or not_forwarded (backs off) it resends until timeoutMs.
   */
  readonly maxResends?: number;
}

export interface TipAddresses {
  readonly chainId: string;
  readonly tipAddresses: readonly string[];
  readonly minTipWei: string;
  readonly feePatterns: readonly Record<string, unknown>[];
  readonly txTypes: readonly string[];
  readonly untippedAllowed: boolean;
  readonly senderAllowList: boolean;
}

export class Txgate {
  private lastUse = 0;
  private readonly ping: NodeJS.Timeout | null;
  private tipCache: { etag: string; value: TipAddresses } | null = null;
  private readonly submitter: Submitter;

  private readonly gate: RpcLink;
  /** The edge's transaction status, where the deployment tracks the chain. */
  private readonly edge: EdgeStatus;
  /** Whether the edge serves the status (learnt at the first call: tracking is per deployment). */
  private tracks: boolean | null = null;
  /** For what only HTTP serves (GET /tip-addresses). */
  private readonly web: HttpClient;

  /** The key in a private field (the options are not kept): util.inspect and console.log of the gate never show it. */
  readonly #apiKey: string;

  private constructor(
    opts: TxgateOptions,
    private readonly links: ReturnType<typeof openLinks>,
    private readonly chain: HttpClient,
  ) {
    this.#apiKey = opts.apiKey;
    this.gate = links.link;
    this.edge = new EdgeStatus(this.gate);
    this.web = links.web;
    this.submitter = new Submitter(this.gate, async (m, p) => {
      const r = await rpcCall(chain, m, p);
      return r.kind === 'result' ? r.result : NO_ANSWER;
    });
    const every = opts.keepAliveMs ?? 5_000;
    this.ping =
      every > 0
        ? setInterval(() => {
            if (performance.now() - this.lastUse >= every) void this.chainIdOf();
          }, every)
        : null;
    this.ping?.unref();
  }

  /** Connects and checks eth_chainId; throws TxgateError (`chain_mismatch`, `unreachable`) rather than go on. */
  static async connect(opts: TxgateOptions): Promise<Txgate> {
    const times = { connectTimeoutMs: opts.connectTimeoutMs ?? 3_000, timeoutMs: opts.timeoutMs ?? 10_000 };
    // The CA to trust is txgate's; the chain RPC is reached with the system's.
    const g = new Txgate(opts, openLinks(opts.url, opts.apiKey, { ...times, ...caOf(opts) }), new HttpClient(opts.chainRpcUrl, times));
    const a = await g.gate.call('eth_chainId', [], false);
    const id = chainIdIn(a);
    if (id === null || id !== opts.chainId) {
      await g.close();
      // Over the WebSocket transport the key is checked at the upgrade: its refusal says why (unauthorized…).
      if (a.kind === 'error') {
        const reason = (a.data as { reason?: unknown } | undefined)?.reason;
        throw new TxgateError(
          `txgate at ${new URL(opts.url).origin} refused eth_chainId: ${a.message}`,
          typeof reason === 'string' ? reason : 'unexpected_answer',
        );
      }
      // A TLS handshake that failed is said with its cause (the certificate, the name, the protocol).
      if (a.kind === 'failed' && a.tls !== undefined) throw new TxgateError(`txgate at ${new URL(opts.url).origin}: ${a.why}`, 'unreachable', a.tls);
      if (id === null) throw new TxgateError(`txgate at ${new URL(opts.url).origin} did not answer eth_chainId`, 'unreachable');
      throw new TxgateError(`txgate serves chain ${id} (0x${id.toString(16)}), not ${opts.chainId}: stopping`, 'chain_mismatch');
    }
    return g;
  }

  /** The transaction hash of signed bytes: keccak-256 of the raw transaction. */
  hashOf(rawTx: string): Promise<string> {
    return this.submitter.hashOf(rawTx);
  }

  /**
   * eth_sendRawTransactionSync (EIP-7966), where the deployment and the account's grant allow
   * it: the receipt in the same call (`maxWaitMs`: the wait asked for, capped by the
   * deployment's). Never thrown; a refusal is one of submit's outcomes.
   */
  async submitSync(rawTx: string, o: { maxWaitMs?: number } = {}): Promise<SyncOutcome> {
    this.lastUse = performance.now();
    return this.submitter.submitSync(rawTx, o.maxWaitMs);
  }

  /**
   * eth_sendRawTransactionConditional (ERC-7796; docs/conditional.md), where the deployment and
   * the account's grant serve it: the signed bytes with their conditions, once; the outcome as
   * `submit`'s, never thrown (unmet conditions are `rejected` with the sequencer's words, or
   * `conditions_expired` when the edge saw the chain pass a bound).
   */
  submitConditional(rawTx: string, options: ConditionalOptions): Promise<SubmitOutcome> {
    this.lastUse = performance.now();
    return this.submitter.submitConditional(rawTx, options);
  }

  /** Submits the signed bytes once; the outcome is never thrown (see SubmitOutcome). */
  submit(rawTx: string): Promise<SubmitOutcome> {
    this.lastUse = performance.now();
    return this.submitter.submit(rawTx);
  }

  /**
   * Submits, then waits for the receipt on the chain RPC. On an uncertain answer it looks for the
   * transaction on the chain and resends only the exact same bytes (bounded, with backoff and
   * jitter); then polls for the receipt with bounded backoff. Never a second transaction.
   */
  async submitAndWait(rawTx: string, o: WaitOptions = {}): Promise<WaitOutcome> {
    const deadline = performance.now() + (o.timeoutMs ?? 60_000);
    this.lastUse = performance.now();
    const out = await this.submitter.settle(rawTx, { maxResends: o.maxResends ?? 5, deadline });
    if (out.kind === 'rejected') return out;
    // Accepted, or still uncertain after every resend: the receipt decides. Not forwarded or
    // rate-limited until the time ran out: nothing can land, so no receipt will come.
    if (out.kind === 'not_forwarded' || out.kind === 'rate_limited') return { kind: 'gave_up', hash: out.hash, last: out };
    // Where the edge tracks the chain: its status decides (no receipt polling of our own).
    const onEdge = this.tracks === false ? null : await this.waitOnEdge(out.hash, deadline);
    if (onEdge !== null && (onEdge.kind !== 'mined' || (o.confirmations ?? 1) <= 1)) return onEdge;
    const receipt = await this.waitForReceipt(out.hash, o.confirmations ?? 1, deadline);
    if (receipt === null) return { kind: 'timeout', hash: out.hash, last: out };
    return { kind: 'mined', hash: out.hash, receipt, status: receipt.status === '0x1' ? 'success' : 'reverted' };
  }

  /**
   * The edge's status of a transaction (`txgate_getTransactionStatus`, docs/tracking.md): its
   * own for a transaction it accepted for this account, else the chain's receipt. Throws
   * TxgateError `method_not_found` where the deployment does not track the chain.
   */
  async status(hash: string): Promise<TxStatus> {
    this.lastUse = performance.now();
    const s = await this.edge.status(hash);
    if (s.kind === 'status') return s.status;
    if (s.kind === 'not_served') throw new TxgateError('this deployment does not track the chain (txgate_getTransactionStatus not served)', 'method_not_found');
    const a = s.answer;
    const reason = a.kind === 'error' ? (a.data as { reason?: unknown } | undefined)?.reason : undefined;
    throw new TxgateError(
      `txgate_getTransactionStatus failed: ${a.kind === 'failed' ? a.why : a.kind === 'error' ? a.message : 'unexpected answer'}`,
      typeof reason === 'string' ? reason : 'unexpected_answer',
    );
  }

  /** Each change of a transaction's status until a final one (pushed on the WebSocket transport, polled over HTTP); ends at the timeout. */
  watch(hash: string, o: WatchOptions = {}): AsyncGenerator<TxStatus> {
    this.lastUse = performance.now();
    return this.edge.watch(hash, o);
  }

  /** submitAndWait on the edge's status (status.ts); null where the edge does not track the chain (then remembered). */
  private async waitOnEdge(hash: string, deadline: number): Promise<WaitOutcome | null> {
    if (this.tracks === null) {
      const first = await this.edge.status(hash);
      if (first.kind === 'failed') return null;
      this.tracks = first.kind === 'status';
      if (!this.tracks) return null;
    }
    return finalOnEdge(this.edge, hash, deadline, async () => {
      const r = await this.chainCall('eth_getTransactionReceipt', [hash]);
      return r.kind === 'result' && isReceipt(r.result) ? r.result : null;
    });
  }

  /** The receipt, once `confirmations` blocks include it; null at the deadline. Bounded backoff: 100 ms doubling to 2 s. */
  async waitForReceipt(hash: string, confirmations: number, deadline: number): Promise<Receipt | null> {
    for (let delay = 100; ; delay = Math.min(2_000, delay * 2)) {
      const r = await this.chainCall('eth_getTransactionReceipt', [hash]);
      if (r.kind === 'result' && isReceipt(r.result)) {
        if (confirmations <= 1) return r.result;
        const head = await this.chainCall('eth_blockNumber', []);
        if (head.kind === 'result' && isQuantity(head.result) && BigInt(head.result) - BigInt(r.result.blockNumber) + 1n >= BigInt(confirmations))
          return r.result;
      }
      const left = deadline - performance.now();
      if (left <= 0) return null;
      await sleep(Math.min(jitter(delay), left));
    }
  }

  /** GET /tip-addresses for the host's chain (or `chainId`), revalidated with its ETag. */
  async tipAddresses(chainId?: number): Promise<TipAddresses> {
    const cached = chainId === undefined ? this.tipCache : null;
    const headers: Record<string, string> = { 'x-api-key': this.#apiKey };
    if (cached !== null) headers['if-none-match'] = cached.etag;
    this.lastUse = performance.now();
    const a = await this.web.request('GET', chainId === undefined ? '/tip-addresses' : `/tip-addresses?chainId=${chainId}`, headers);
    if (a.kind === 'failed') throw new TxgateError(`GET /tip-addresses failed: ${a.why}`, 'unreachable', a.tls);
    if (a.status === 304 && cached !== null) return cached.value;
    let body: { error?: { message?: string; data?: { reason?: string } } } & Partial<TipAddresses>;
    try {
      body = JSON.parse(a.text);
    } catch {
      throw new TxgateError(`GET /tip-addresses: HTTP ${a.status} with a body that is not JSON`, 'unexpected_answer');
    }
    if (a.status !== 200) throw new TxgateError(body.error?.message ?? `HTTP ${a.status}`, body.error?.data?.reason ?? 'unexpected_answer');
    const value = body as TipAddresses;
    const etag = a.headers.etag;
    if (chainId === undefined && typeof etag === 'string') this.tipCache = { etag, value };
    return value;
  }

  /** A call to the chain's own RPC (reads: nonce, gas, fees, receipts). */
  chainCall(method: string, params: readonly unknown[]): Promise<RpcAnswer> {
    return rpcCall(this.chain, method, params);
  }

  async close(): Promise<void> {
    if (this.ping !== null) clearInterval(this.ping);
    await Promise.all([this.links.close(), this.chain.close()]);
  }

  /** The chain id txgate answers (its keep-alive), or null without an answer. */
  private async chainIdOf(): Promise<number | null> {
    this.lastUse = performance.now();
    return chainIdIn(await this.gate.call('eth_chainId', [], false));
  }
}

/** connectTxgate({ url, apiKey, chainId, chainRpcUrl }): checks eth_chainId (stops on a mismatch) and keeps the connection warm. */
export function connectTxgate(opts: TxgateOptions): Promise<Txgate> {
  return Txgate.connect(opts);
}

/** The chain id an eth_chainId answer carries, or null. */
function chainIdIn(a: RpcAnswer): number | null {
  return a.kind === 'result' && typeof a.result === 'string' && /^0x[0-9a-f]+$/i.test(a.result) ? Number.parseInt(a.result, 16) : null;
}

/** A JSON-RPC quantity: 0x-hex (what BigInt() takes without throwing). */
function isQuantity(v: unknown): v is string {
  return typeof v === 'string' && /^0x[0-9a-fA-F]+$/.test(v);
}

function isReceipt(v: unknown): v is Receipt {
  return typeof v === 'object' && v !== null && isQuantity((v as Receipt).status) && isQuantity((v as Receipt).blockNumber);
}
