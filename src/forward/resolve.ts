/**
 * Rule 2 of the outcome rules (attempts.ts, docs/design.md §5.4): a written part with no definite
 * answer is asked again (the hash, then the same bytes) until it tells or the forward's budget
 * runs out, over a connection of that sequencer that has answered before where one exists (a
 * fresh one may be closed unread by the same limit that lost the first write); and the lookup.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import { readLookup, type Known } from './answer.js';
import { type Part, type ForwardRequest, part, type SendMethod } from './parts.js';
import type { CallTimes, Upstream } from '../upstreams/upstream.js';
import type { Sequencer } from './sequencer.js';
import { LOOKUP_METHOD, SEND_METHOD } from '../rpc/rpc-methods.js';

const MIN_PAUSE_MS = 10;
const MAX_PAUSE_MS = 200;
const FAULT = 'a fault';
const MISMATCH = 'another hash';

/** What asking again needs: the forward's times, and the chain's own RPC (or null). */
export interface Asking {
  readonly times: CallTimes;
  /** The chain's own RPC (`chains[].rpc`), asked too where a sequencer does not confirm a hash; else null. */
  readonly rpc: Upstream | null;
}

/**
 * Rule 2: the hash looked up, then the same bytes resent, in turn, until the sequencer tells or
 * the budget (one forward timeout from now) runs out: a lookup returning the transaction or a
 * resend answered with the hash is an acceptance, a resend refused in words that do not suggest
 * the bytes are there its refusal. An answer that asking again will not change (another hash, no
 * lookup served) or the budget's end leaves it uncertain; so does a suggestive refusal with the
 * lookup answering null (the first write may still be being taken).
 */
export async function resolve(
  at: Asking,
  seq: Sequencer,
  req: ForwardRequest,
  method: SendMethod,
  first: Part,
  others: { readonly accepted: boolean },
): Promise<Part> {
  const t = performance.now() - first.ms;
  const deadline = performance.now() + at.times.timeoutMs;
  // A resend leaves this much of the budget to the lookup after it.
  const reserve = at.times.timeoutMs / 4;
  const params = `["${req.rawHex}"]`;
  let pause = MIN_PAUSE_MS;
  let tries = 0;
  let said = 'could not tell';
  let transport = first.transport;
  let ask: 'lookup' | 'resend' = 'lookup';
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0 || others.accepted) break;
    if (ask === 'lookup') {
      // The hash first: a sequencer that took the bytes says so without another write.
      const known = await lookup(at, seq, req.hash, deadline);
      if (known === 'known')
        return part(
          seq,
          'accepted',
          'accepted',
          'lookup',
          method.knownExit(req.hash),
          t,
          `${first.detail ?? 'no answer'}; resent ${tries}x; the hash is known`,
        );
      // An answer that will not change by asking again (another hash; no lookup served after a refusal in suggestive words).
      if (tries > 0 && (said === MISMATCH || (known === 'no_lookup' && said !== FAULT))) break;
      ask = 'resend';
      continue;
    }
    tries++;
    const bound = Math.max(1, left > 2 * reserve ? left - reserve : left);
    const times = { timeoutMs: bound, queueMs: Math.max(1, Math.min(bound, at.times.queueMs)), proven: true };
    const r = method.readResend(await (method.resend !== undefined ? method.resend(seq, req, times) : seq.call(SEND_METHOD, params, times)), req.hash);
    const again = `${first.detail ?? 'no answer'}; resent ${tries}x`;
    if (r.kind === 'accepted') return part(seq, 'accepted', 'accepted', 'resend', method.knownExit(req.hash), t, `${again}: the hash`);
    if (r.kind === 'refused') return part(seq, 'refused', 'rejected', 'resend', r.exit, t, `${again}: refused: ${r.detail}`);
    transport = (r.kind === 'uncertain' || r.kind === 'not_sent') && r.transport === true;
    said = r.kind === 'uncertain' && r.outcome === 'hash_mismatch' ? MISMATCH : r.kind === 'check' ? r.detail : FAULT;
    await sleep(Math.min(pause, deadline - performance.now()));
    pause = Math.min(pause * 2, MAX_PAUSE_MS);
    ask = 'lookup';
  }
  return {
    ...first,
    state: 'uncertain',
    rule: null,
    ms: performance.now() - t,
    transport,
    detail: `${first.detail ?? 'no answer'}; resent ${tries}x, could not tell (last: ${said})`,
  };
}

/**
 * eth_getTransactionByHash on the sequencer, and on the chain's RPC where the sequencer does
 * not know it: `known` if either returns this very transaction. Asked of the chain's RPC itself
 * (the sync send's receipt mode: sync/receipt-wait.ts), once.
 */
export async function lookup(at: Asking, seq: Upstream, hash: string, deadline: number): Promise<Known> {
  const params = `["${hash}"]`;
  const left = () => Math.max(1, Math.min(deadline - performance.now(), at.times.timeoutMs));
  // On a connection that has answered before, where one exists (src/upstreams/upstream.ts, CallTimes.proven).
  const k = readLookup(await seq.call(LOOKUP_METHOD, params, { timeoutMs: left(), queueMs: Math.min(left(), at.times.queueMs), proven: true }), hash);
  if (k === 'known' || at.rpc === null || at.rpc === seq) return k;
  const r = readLookup(await at.rpc.call(LOOKUP_METHOD, params, { timeoutMs: left(), queueMs: Math.min(left(), at.times.queueMs) }), hash);
  return r === 'known' ? 'known' : k;
}

/** The lookup asked again, pausing between (10 ms doubling to 200), until it knows the hash or `deadline` passes. */
export async function lookedUp(at: Asking, seq: Upstream, hash: string, deadline: number): Promise<boolean> {
  for (let pause = MIN_PAUSE_MS; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    if ((await lookup(at, seq, hash, deadline)) === 'known') return true;
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await sleep(Math.min(pause, left));
  }
}

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, ms));
}
