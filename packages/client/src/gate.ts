/**
 * The spec's client flow as a library (docs/design.md §1.4): check the chain id, submit
 * signed bytes and get a definite outcome, resolve an uncertain one by the receipt of the hash
 * computed locally, resend only the exact same bytes, and poll the chain RPC (never txgate) for
 * the receipt with bounded backoff. It never signs anything, so it can never create a second
 * transaction.
 */
import { createKeccak } from 'hash-wasm';
import { HttpClient, rpcCall, type RpcAnswer } from './http.js';
import { openLinks, type RpcLink } from './link.js';
import { kindOf } from './outcomes.js';

export interface TxgateOptions {
  /**
   * txgate's base URL (the hostname assigned at onboarding): http(s):// for one request per POST,
   * or ws(s):// for the WebSocket lane where the deployment runs it (one connection, many in flight).
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
  /** Ping (eth_chainId) when no call went out for this long, default 5,000 ms; 0 turns it off. */
  readonly keepAliveMs?: number;
}

/** What one submission came to. Never thrown: every protocol answer is one of these. */
export type SubmitOutcome =
  /**
   * The sequencer accepted it: the hash (not yet a receipt). `lane`: on a chain with Timeboost's
   * express lane, which lane carried it (txgate's `X-Txgate-Lane` header); absent elsewhere.
   */
  | { readonly kind: 'accepted'; readonly hash: string; readonly lane?: 'express' | 'plain' }
  /** Refused for a reason that resending the same bytes will not change (400, 401, 402, 403, 413, 421, or the sequencer's own JSON-RPC error). */
  | { readonly kind: 'rejected'; readonly hash: string; readonly reason: string; readonly code: number; readonly message: string; readonly status: number }
  /** 429: wait this long (with jitter), then the same bytes may go again. */
  | { readonly kind: 'rate_limited'; readonly hash: string; readonly retryAfterMs: number }
  /** 503 or no connection: definitely not forwarded; the same bytes may go again after a backoff (txgate's retry table). */
  | { readonly kind: 'not_forwarded'; readonly hash: string; readonly reason: string }
  /** A timeout, a 502, a lost connection: it may or may not have been accepted. Check the receipt of `hash`; resend only these bytes. */
  | { readonly kind: 'uncertain'; readonly hash: string; readonly why: string };

/** What one eth_sendRawTransactionSync came to (`submitSync`). */
export type SyncOutcome =
  /** Executed: the receipt as the chain gave it (`status` "0x1" success, "0x0" reverted). */
  | { readonly kind: 'executed'; readonly hash: string; readonly receipt: Receipt & Readonly<Record<string, unknown>> }
  /** Accepted, no receipt within the wait: not lost; look the hash up (waitForReceipt). */
  | { readonly kind: 'pending'; readonly hash: string }
  | Exclude<SubmitOutcome, { kind: 'accepted' }>;

export interface Receipt {
  readonly transactionHash: string;
  /** "0x1" executed, "0x0" reverted. */
  readonly status: string;
  readonly blockNumber: string;
  readonly [field: string]: unknown;
}

export type WaitOutcome =
  | { readonly kind: 'mined'; readonly hash: string; readonly receipt: Receipt; readonly status: 'success' | 'reverted' }
  | Extract<SubmitOutcome, { kind: 'rejected' }>
  /** No receipt (with the confirmations asked) within the time given: the transaction may still land. */
  | { readonly kind: 'timeout'; readonly hash: string; readonly last: SubmitOutcome | null }
  /**
   * Every attempt until `timeoutMs` was answered "not sent" (rate_limited, not_forwarded):
   * nothing reached a sequencer, so nothing can land. `last` is the last answer.
   */
  | { readonly kind: 'gave_up'; readonly hash: string; readonly last: Extract<SubmitOutcome, { kind: 'rate_limited' | 'not_forwarded' }> };

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

export class TxgateError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
    this.name = 'TxgateError';
  }
}

/** What a chain RPC call gives when it could not be made (no connection, an error, a timeout). */
export const NO_ANSWER: unique symbol = Symbol('no answer from the chain RPC');

/** A chain RPC call: the result (null: none, e.g. no receipt yet), or NO_ANSWER. */
export type ChainResult = (method: string, params: readonly unknown[]) => Promise<unknown>;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Full jitter within [ms/2, ms]. */
const jitter = (ms: number) => ms / 2 + Math.random() * (ms / 2);

/**
 * Submission with its outcome resolved, shared by the kit and the viem and ethers adapters:
 * txgate for the bytes, the chain RPC to tell whether an uncertain attempt landed.
 */
export class Submitter {
  private keccak: ((b: Uint8Array) => string) | null = null;

  constructor(
    private readonly gate: RpcLink,
    private readonly chainResult: ChainResult,
  ) {}

  /** The transaction hash of signed bytes: keccak-256 of the raw transaction. */
  async hashOf(rawTx: string): Promise<string> {
    if (this.keccak === null) {
      const hasher = await createKeccak(256);
      this.keccak = (b) => '0x' + hasher.init().update(b).digest('hex');
    }
    return this.keccak(hexBytes(rawTx));
  }

  async submit(rawTx: string): Promise<SubmitOutcome> {
    const hash = await this.hashOf(rawTx);
    const a = await this.gate.call('eth_sendRawTransaction', [rawTx], true);
    return classify(a, hash);
  }

  /** One eth_sendRawTransactionSync: executed (the receipt of these bytes), pending (accepted, no receipt in the wait), or a submit outcome. */
  async submitSync(rawTx: string, maxWaitMs?: number): Promise<SyncOutcome> {
    const hash = await this.hashOf(rawTx);
    const params = maxWaitMs === undefined ? [rawTx] : [rawTx, maxWaitMs];
    const a = await this.gate.call('eth_sendRawTransactionSync', params, true);
    if (a.kind === 'result') {
      const r = a.result as { transactionHash?: unknown } | null;
      if (typeof r === 'object' && r !== null && typeof r.transactionHash === 'string' && r.transactionHash.toLowerCase() === hash)
        return { kind: 'executed', hash, receipt: r as Receipt & Record<string, unknown> };
      return { kind: 'uncertain', hash, why: 'answered something other than the receipt of these bytes' };
    }
    if (a.kind === 'error') {
      const reason = (a.data as { reason?: unknown } | undefined)?.reason;
      if (kindOf(typeof reason === 'string' ? reason : undefined, a.status) === 'pending') return { kind: 'pending', hash };
    }
    const out = classify(a, hash);
    return out.kind === 'accepted' ? { kind: 'pending', hash } : out;
  }

  /** Whether the chain RPC knows this hash (mined, or pending in its pool); null when it could not be asked. */
  async known(hash: string): Promise<boolean | null> {
    const receipt = await this.chainResult('eth_getTransactionReceipt', [hash]);
    if (receipt !== NO_ANSWER && receipt != null) return true;
    const tx = await this.chainResult('eth_getTransactionByHash', [hash]);
    if (tx !== NO_ANSWER && tx != null) return true;
    return receipt === NO_ANSWER || tx === NO_ANSWER ? null : false;
  }

  /**
   * Submits until the outcome is definite: accepted (or found on the chain after an uncertain
   * attempt), rejected, or, when the resends or the time run out, the last outcome. Only the
   * same bytes are ever resent; a refusal after an uncertain attempt is checked against the
   * chain (the first attempt may have landed), and is final only if the chain RPC answers that
   * it does not have the transaction: when it cannot be asked, the outcome stays uncertain.
   */
  async settle(rawTx: string, o: SettleOptions): Promise<SubmitOutcome> {
    let doubt = false;
    let uncertainResends = 0;
    let unsentResends = 0;
    for (let attempt = 0; ; attempt++) {
      const out = await this.submit(rawTx);
      if (out.kind === 'accepted') return out;
      if (out.kind === 'uncertain') doubt = true;
      if ((out.kind === 'rejected' || out.kind === 'uncertain') && doubt) {
        const landed = await this.known(out.hash);
        if (landed === true) return { kind: 'accepted', hash: out.hash };
        if (landed === null && out.kind === 'rejected')
          return {
            kind: 'uncertain',
            hash: out.hash,
            why: `refused (${out.reason}) after an uncertain attempt, and the chain RPC could not tell whether that one landed`,
          };
      }
      if (out.kind === 'rejected') return out;
      // rate_limited: wait what txgate said (plus up to 20%, so a crowd does not come back at
      // once); not_forwarded and uncertain: back off, 100 ms doubling to 2 s, with jitter.
      const wait = out.kind === 'rate_limited' ? out.retryAfterMs * (1 + Math.random() * 0.2) : jitter(Math.min(2_000, 100 * 2 ** Math.min(attempt, 5)));
      const exhausted = out.kind === 'uncertain' ? uncertainResends >= o.maxResends : unsentResends >= (o.maxUnsentResends ?? Number.POSITIVE_INFINITY);
      const left = o.deadline - performance.now();
      // Out of resends or time: after an uncertain attempt, it stays uncertain (it may have
      // landed). A wait that would pass the deadline ends at it, for one last attempt.
      if (exhausted || left <= 0)
        return doubt && out.kind !== 'uncertain' ? { kind: 'uncertain', hash: out.hash, why: `an earlier attempt was uncertain; last: ${out.kind}` } : out;
      if (out.kind === 'uncertain') uncertainResends++;
      else unsentResends++;
      await sleep(Math.min(wait, left));
    }
  }
}

export interface SettleOptions {
  /** Resends after an uncertain answer. */
  readonly maxResends: number;
  /** Resends after an answer that says nothing was sent (rate_limited, not_forwarded); default: until the deadline. */
  readonly maxUnsentResends?: number;
  /** performance.now() after which nothing more is sent. */
  readonly deadline: number;
}

export class Txgate {
  private lastUse = 0;
  private readonly ping: NodeJS.Timeout | null;
  private tipCache: { etag: string; value: TipAddresses } | null = null;
  private readonly submitter: Submitter;

  private readonly gate: RpcLink;
  /** For what only HTTP serves (GET /tip-addresses). */
  private readonly web: HttpClient;

  private constructor(
    private readonly opts: TxgateOptions,
    private readonly links: ReturnType<typeof openLinks>,
    private readonly chain: HttpClient,
  ) {
    this.gate = links.link;
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
    const g = new Txgate(opts, openLinks(opts.url, opts.apiKey, times), new HttpClient(opts.chainRpcUrl, times));
    const a = await g.gate.call('eth_chainId', [], false);
    const id = chainIdIn(a);
    if (id === null || id !== opts.chainId) {
      await g.close();
      // Over the WebSocket lane the key is checked at the upgrade: its refusal says why (unauthorized…).
      if (a.kind === 'error') {
        const reason = (a.data as { reason?: unknown } | undefined)?.reason;
        throw new TxgateError(
          `txgate at ${new URL(opts.url).origin} refused eth_chainId: ${a.message}`,
          typeof reason === 'string' ? reason : 'unexpected_answer',
        );
      }
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
    const receipt = await this.waitForReceipt(out.hash, o.confirmations ?? 1, deadline);
    if (receipt === null) return { kind: 'timeout', hash: out.hash, last: out };
    return { kind: 'mined', hash: out.hash, receipt, status: receipt.status === '0x1' ? 'success' : 'reverted' };
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
    const headers: Record<string, string> = { 'x-api-key': this.opts.apiKey };
    if (cached !== null) headers['if-none-match'] = cached.etag;
    this.lastUse = performance.now();
    const a = await this.web.request('GET', chainId === undefined ? '/tip-addresses' : `/tip-addresses?chainId=${chainId}`, headers);
    if (a.kind === 'failed') throw new TxgateError(`GET /tip-addresses failed: ${a.why}`, 'unreachable');
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

/** What txgate's answer means for the client (docs/design.md §1.2; docs/clients.md). */
export function classify(a: RpcAnswer, hash: string): SubmitOutcome {
  if (a.kind === 'failed') {
    if (!a.sent) return { kind: 'not_forwarded', hash, reason: 'unreachable' };
    return { kind: 'uncertain', hash, why: a.why };
  }
  if (a.kind === 'result') {
    if (typeof a.result === 'string' && a.result.toLowerCase() === hash) {
      const lane = a.headers['x-txgate-lane'];
      return lane === 'express' || lane === 'plain' ? { kind: 'accepted', hash, lane } : { kind: 'accepted', hash };
    }
    return { kind: 'uncertain', hash, why: `answered ${String(a.result).slice(0, 80)}, not the hash of these bytes` };
  }
  const data = (typeof a.data === 'object' && a.data !== null ? a.data : {}) as { reason?: unknown; retryAfterMs?: unknown };
  const known = typeof data.reason === 'string' ? data.reason : undefined;
  const reason = known ?? 'unexpected_answer';
  const kind = kindOf(known, a.status);
  if (kind === 'rejected') return { kind: 'rejected', hash, reason, code: a.code, message: a.message, status: a.status };
  if (kind === 'rate_limited') {
    const header = Number(a.headers['retry-after']);
    const retryAfterMs = typeof data.retryAfterMs === 'number' ? data.retryAfterMs : Number.isFinite(header) ? header * 1000 : 1000;
    return { kind: 'rate_limited', hash, retryAfterMs };
  }
  if (kind === 'not_forwarded') return { kind: 'not_forwarded', hash, reason };
  return { kind: 'uncertain', hash, why: `HTTP ${a.status} ${reason}: ${a.message}` };
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

function hexBytes(rawTx: string): Uint8Array {
  if (!/^0x(?:[0-9a-fA-F]{2})+$/.test(rawTx)) throw new TxgateError('a signed transaction is 0x-prefixed hex', 'invalid_params');
  return Buffer.from(rawTx.slice(2), 'hex');
}
