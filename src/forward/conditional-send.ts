/**
 * The conditional send of one chain (docs/conditional.md#the-forward-never-unconditional): the
 * bytes go only as `eth_sendRawTransactionConditional` with their options unchanged (or through
 * the express lane with them), never plainly, not even in a resend (this method's `resend`). The
 * plain send's rules and route, with one reading of its own: -32003 (unmet) or -32005 (too costly)
 * is a refusal once a lookup says the chain lacks the hash, an acceptance where it has it. Its
 * flights share the chain's forward places, in a table of their own (bytes and options the key):
 * a plain send of the same bytes never shares a conditional one's outcome, nor the reverse.
 */
import { type Exit, result, upstreamRejected } from '../base/errors.js';
import { readPlain, readFault, type Reading } from './answer.js';
import type { ChainLink } from './chain-link.js';
import type { ChainForwarder } from './forwarder.js';
import type { ForwardRequest, SendMethod } from './parts.js';
import type { Sequencer } from './sequencer.js';
import { CONDITIONAL_METHOD } from '../rpc/rpc-methods.js';
import type { Answer, CallTimes } from '../upstreams/upstream.js';
import type { Conditions } from '../conditional/options.js';
import { type Flight, Flights } from './flight.js';

/** The codes a conditional sequencer refuses unmet conditions (-32003) and too costly ones (-32005) with. */
const CONDITIONS_REFUSED = -32003;
const LIMIT_EXCEEDED = -32005;

/** What an answer to eth_sendRawTransactionConditional says (also its resend's). */
export function readConditional(a: Answer, hash: string): Reading {
  if (a.kind === 'error' && (a.code === CONDITIONS_REFUSED || a.code === LIMIT_EXCEEDED)) {
    const detail = a.message.length > 200 ? a.message.slice(0, 200) : a.message;
    return { kind: 'check', confirmed: { exit: result(hash), outcome: 'already_known' }, unconfirmed: upstreamRejected(a.code, a.message, a.data), detail };
  }
  if (a.kind === 'fault') return readFault(a);
  return readPlain(a, hash);
}

const params = (req: ForwardRequest): string => `["${req.rawHex}",${req.conditional!.json}]`;

export class ConditionalSend {
  private readonly method: SendMethod;
  private readonly flights: Flights;

  constructor(
    link: ChainLink,
    /** The chain's plain send: its sequencer clients, its forward places and its route (the express lane's rule, the strategy). */
    private readonly forwarder: ChainForwarder,
  ) {
    const c = link.chain;
    const times: CallTimes = { timeoutMs: c.forward.timeoutMs, queueMs: c.forward.queueMs };
    const call = (seq: Sequencer, req: ForwardRequest, t: CallTimes) => seq.call(CONDITIONAL_METHOD, params(req), t);
    this.method = {
      name: CONDITIONAL_METHOD,
      call: (seq, req) => call(seq, req, times),
      read: readConditional,
      readResend: readConditional,
      resend: call,
      knownExit: result,
    };
    this.flights = new Flights({
      table: new Map<string, Flight>(),
      places: forwarder.places,
      log: link.log,
      failure: 'conditional forward failed unexpectedly: outcome uncertain',
    });
  }

  /** The answer for a verified transaction with its checked conditions. */
  send(base: ForwardRequest, c: Conditions): Exit | PromiseLike<Exit> {
    const key = base.hash + c.json;
    const same = this.flights.joined(key);
    if (same !== undefined) return same;
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
    return this.forwarder.launch(this.flights, key, req, this.method);
  }
}
