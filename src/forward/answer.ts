/**
 * What a sequencer's answer to eth_sendRawTransaction means (DESIGN §4, Forward):
 * - a result equal to the locally computed hash: accepted; any other result: a hash mismatch
 *   (502, never reported as acceptance);
 * - "already known" for the same bytes: accepted (resubmitting the exact bytes is how clients
 *   resolve an uncertain outcome);
 * - "nonce too low": accepted only if that sequencer knows this very hash (a second call), a
 *   refusal if it answers that it does not, and uncertain if that call fails: the nonce may
 *   have been taken by these very bytes;
 * - any other JSON-RPC error: the sequencer's refusal, passed through with HTTP 200;
 * - a fault (transport, timeout, 5xx, garbage): uncertain if the bytes were written, else not
 *   forwarded.
 */
import { reject, REJECT, result, upstreamRejected, type Exit } from '../errors.js';
import type { Answer } from './upstream.js';

/** What one sequencer made of one transaction. */
export type Outcome = 'accepted' | 'already_known' | 'nonce_known' | 'rejected' | 'hash_mismatch' | 'fault';

export interface Verdict {
  readonly outcome: Outcome | 'nonce_too_low';
  readonly exit: Exit;
  readonly detail?: string | undefined;
  /** For a fault: whether the request was written. */
  readonly sent?: boolean;
}

/** "Already known" wordings: geth/op-geth, erigon ("already known"), reth/anvil ("already imported"), nethermind ("AlreadyKnown"). */
const ALREADY_KNOWN = /already known|known transaction|already imported|alreadyknown|already in (?:the )?(?:tx ?|mem)?pool|transaction already exists/i;
const NONCE_TOO_LOW = /nonce too low|noncetoolow|nonce is too low|OldNonce/i;

/** The verdict on one answer; 'nonce_too_low' asks the caller to look the hash up on that sequencer. */
export function judge(a: Answer, hash: string): Verdict {
  if (a.kind === 'fault') return { outcome: 'fault', exit: a.sent ? REJECT.upstream_error : REJECT.upstream_unavailable, detail: a.why, sent: a.sent };
  if (a.kind === 'result') {
    if (typeof a.result === 'string' && a.result.toLowerCase() === hash) return { outcome: 'accepted', exit: result(hash) };
    return {
      outcome: 'hash_mismatch',
      exit: reject('upstream_error', 'Sequencer answered with a different transaction hash', { txHash: hash }),
      detail: 'hash mismatch',
    };
  }
  if (ALREADY_KNOWN.test(a.message)) return { outcome: 'already_known', exit: result(hash), detail: a.message };
  const refused = upstreamRejected(a.code, a.message, a.data);
  if (NONCE_TOO_LOW.test(a.message)) return { outcome: 'nonce_too_low', exit: refused, detail: a.message };
  return { outcome: 'rejected', exit: refused, detail: a.message };
}

/**
 * After "nonce too low": accepted if the sequencer's eth_getTransactionByHash knows the hash; a
 * fault of that lookup leaves it uncertain (the bytes were written, and may be what took the
 * nonce); any other answer (null, an error) lets the refusal stand.
 */
export function knownAfterNonceTooLow(v: Verdict, known: Answer, hash: string): Verdict & { outcome: Outcome } {
  if (known.kind === 'result' && isTxObject(known.result, hash)) return { outcome: 'nonce_known', exit: result(hash), detail: v.detail };
  if (known.kind === 'fault')
    return {
      outcome: 'fault',
      exit: reject('upstream_error', undefined, { txHash: hash }),
      detail: `${v.detail ?? 'nonce too low'}; looking the hash up failed: ${known.why}`,
      sent: true,
    };
  return { outcome: 'rejected', exit: v.exit, detail: v.detail };
}

/** A transaction object of this very hash (an eth_getTransactionByHash result). */
export function isTxObject(v: unknown, hash: string): boolean {
  return typeof v === 'object' && v !== null && typeof (v as { hash?: unknown }).hash === 'string' && (v as { hash: string }).hash.toLowerCase() === hash;
}
