/**
 * Submission with its outcome resolved (docs/design.md §1.4), behind the kit and the viem and
 * ethers adapters alike: txgate for the bytes, the chain RPC to tell whether an uncertain attempt
 * landed. It never signs anything, so it can never create a second transaction.
 */
import { createKeccak } from 'hash-wasm';
import type { RpcLink } from './rpc-link.js';
import { kindOf } from './outcomes.js';
import { classify, hexBytes, laneOf, type Receipt, type SubmitOutcome, type SyncOutcome } from './submission.js';

/** What a chain RPC call gives when it could not be made (no connection, an error, a timeout). */
export const NO_ANSWER: unique symbol = Symbol('no answer from the chain RPC');

/** A chain RPC call: the result (null: none, e.g. no receipt yet), or NO_ANSWER. */
export type ChainResult = (method: string, params: readonly unknown[]) => Promise<unknown>;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Full jitter within [ms/2, ms]. */
export const jitter = (ms: number) => ms / 2 + Math.random() * (ms / 2);

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

  /**
   * One eth_sendRawTransactionConditional (ERC-7796, where the deployment and the grant serve it):
   * the bytes with their conditions, never sent without them; the outcome as `submit`'s.
   */
  async submitConditional(rawTx: string, options: ConditionalOptions): Promise<SubmitOutcome> {
    const hash = await this.hashOf(rawTx);
    return classify(await this.gate.call('eth_sendRawTransactionConditional', [rawTx, options], true), hash);
  }

  /** One eth_sendRawTransactionSync: executed (the receipt of these bytes), pending (accepted, no receipt in the wait), or a submit outcome. */
  async submitSync(rawTx: string, maxWaitMs?: number): Promise<SyncOutcome> {
    const hash = await this.hashOf(rawTx);
    const params = maxWaitMs === undefined ? [rawTx] : [rawTx, maxWaitMs];
    const a = await this.gate.call('eth_sendRawTransactionSync', params, true);
    const lane = a.kind === 'failed' ? undefined : laneOf(a.headers);
    const named = lane === undefined ? {} : { lane };
    if (a.kind === 'result') {
      const r = a.result as { transactionHash?: unknown } | null;
      if (typeof r === 'object' && r !== null && typeof r.transactionHash === 'string' && r.transactionHash.toLowerCase() === hash)
        return { kind: 'executed', hash, receipt: r as Receipt & Record<string, unknown>, ...named };
      return { kind: 'uncertain', hash, why: 'answered something other than the receipt of these bytes' };
    }
    if (a.kind === 'error') {
      const reason = (a.data as { reason?: unknown } | undefined)?.reason;
      if (kindOf(typeof reason === 'string' ? reason : undefined, a.status) === 'pending') return { kind: 'pending', hash, ...named };
    }
    const out = classify(a, hash);
    return out.kind === 'accepted' ? { kind: 'pending', hash, ...named } : out;
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

/** The conditions of eth_sendRawTransactionConditional (docs/conditional.md): quantities as 0x-hex, bounds inclusive. */
export interface ConditionalOptions {
  /** Address → its storage root, or an object of slot → value (and `balance`, `nonce`, `code`). */
  readonly knownAccounts?: Readonly<Record<string, string | Readonly<Record<string, string>>>>;
  readonly blockNumberMin?: string;
  readonly blockNumberMax?: string;
  readonly timestampMin?: string;
  readonly timestampMax?: string;
}

export interface SettleOptions {
  /** Resends after an uncertain answer. */
  readonly maxResends: number;
  /** Resends after an answer that says nothing was sent (rate_limited, not_forwarded); default: until the deadline. */
  readonly maxUnsentResends?: number;
  /** performance.now() after which nothing more is sent. */
  readonly deadline: number;
}

/** The `ca` option, where given (for the link's times: exactOptionalPropertyTypes). */
export function caOf(o: { readonly ca?: string | Buffer }): { ca?: string | Buffer } {
  return o.ca !== undefined ? { ca: o.ca } : {};
}
