/**
 * The conditional send of one chain (docs/conditional.md#the-forward-never-unconditional): the bytes and their options
 * go only as `eth_sendRawTransactionConditional` with the options unchanged, or through the
 * express lane with them in `options`; never as a plain `eth_sendRawTransaction`, neither after a
 * refusal, nor an unclear answer, nor in the resend that resolves one (forward/resolve.ts takes
 * this kind's `resend`). The outcome rules are the plain send's (forward/attempts.ts), on the
 * chain's own sequencers, with one reading of its own:
 *
 * - a -32003 (conditions unmet) or -32005 (cost past the sequencer's limit) is the sequencer's
 *   refusal, passed on as it came, once a lookup of the hash says the chain does not have it
 *   (the same bytes sent before may have been taken, and their own inclusion changes the state
 *   the conditions read); the lookup finding it is an acceptance; not telling, uncertain.
 *
 * Its in-flight table is its own: identical bytes with identical options in flight share one
 * forward; a plain send of the same bytes never shares a conditional one's outcome, nor the
 * reverse (a conditional refusal says nothing of the plain bytes, and a plain acceptance nothing
 * of the conditions).
 */
import { result, type Exit, reject } from '../base/errors.js';
import { readPlain, readFault, type Reading } from './answer.js';
import type { ChainLink } from './chain-link.js';
import type { ChainForwarder } from './forwarder.js';
import type { ForwardRequest, SendKind } from './parts.js';
import type { Sequencer } from './sequencer.js';
import { CONDITIONAL_METHOD } from '../rpc/rpc-methods.js';
import { upstreamRejected } from '../base/errors.js';
import type { Answer, CallTimes } from '../upstreams/upstream.js';
import type { Conditions } from '../conditional/options.js';

/** The codes a conditional sequencer refuses unmet conditions (-32003) and too costly ones (-32005) with. */
const CONDITIONS_REFUSED = -32003;
const LIMIT_EXCEEDED = -32005;

/** What an answer to eth_sendRawTransactionConditional says (also its resend's). */
export function readConditional(a: Answer, hash: string): Reading {
  if (a.kind === 'error' && (a.code === CONDITIONS_REFUSED || a.code === LIMIT_EXCEEDED)) {
    const detail = a.message.length > 200 ? a.message.slice(0, 200) : a.message;
    return { t: 'check', confirmed: { exit: result(hash), outcome: 'already_known' }, unconfirmed: upstreamRejected(a.code, a.message, a.data), detail };
  }
  if (a.kind === 'fault') return readFault(a);
  return readPlain(a, hash);
}

const params = (req: ForwardRequest): string => `["${req.rawHex}",${req.conditional!.json}]`;

export class ConditionalSend {
  private readonly pending = new Map<string, Promise<Exit>>();
  private readonly kind: SendKind;

  constructor(
    private readonly link: ChainLink,
    /**
     * The chain's plain send: its sequencer clients (one set of connections per chain and thread)
     * and its route, the express lane's rule and the chain's strategy (forwarder.ts).
     */
    private readonly forwarder: ChainForwarder,
  ) {
    const c = link.chain;
    const times: CallTimes = { timeoutMs: c.forward.timeoutMs, queueMs: c.forward.queueMs };
    const call = (seq: Sequencer, req: ForwardRequest, t: CallTimes) => seq.call(CONDITIONAL_METHOD, params(req), t);
    this.kind = {
      method: CONDITIONAL_METHOD,
      call: (seq, req) => call(seq, req, times),
      read: readConditional,
      readResend: readConditional,
      resend: call,
      knownExit: result,
    };
  }

  /** The answer for a verified transaction with its checked conditions. */
  send(base: ForwardRequest, c: Conditions): Exit | Promise<Exit> {
    const key = base.hash + c.json;
    const same = this.pending.get(key);
    if (same !== undefined) return same;
    // The chain's maxInFlight, shared with its plain sends (forwarder.ts).
    const refused = this.forwarder.enter();
    if (refused !== null) return refused;
    // One literal (not a spread of the forward stage's request): one shape for every conditional request.
    const req: ForwardRequest = {
      hash: base.hash,
      rawHex: base.rawHex,
      account: base.account,
      reqId: base.reqId,
      sender: base.sender,
      t0: base.t0 as number, // the forward stage always sets it
      granted: base.granted,
      conditional: c,
    };
    const p = this.forwarder.route(req, this.kind).then(
      (exit) => {
        this.leave(key);
        return exit;
      },
      (e: unknown) => {
        this.leave(key);
        this.link.log.error({ err: e, tx: req.hash, account: req.account, reqId: req.reqId }, 'conditional forward failed unexpectedly: outcome uncertain');
        return reject('upstream_error', undefined, { txHash: req.hash });
      },
    );
    this.pending.set(key, p);
    return p;
  }

  private leave(key: string): void {
    this.forwarder.leave();
    this.pending.delete(key);
  }
}
