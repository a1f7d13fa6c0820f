/**
 * What one sequencer answer says, before anything is concluded from it (docs/design.md §5.2):
 * the hash alone is an acceptance; a wording that suggests the bytes are there ("already known",
 * "nonce too low") is a question for the lookup (`check`), never a verdict; any other error is
 * the sequencer's refusal; any other result is uncertain; a fault is uncertain once written,
 * else never sent.
 */
import { REJECT, reject, result, safeJson, upstreamRejected, type Exit } from '../base/errors.js';
import type { Answer } from '../upstreams/upstream.js';

/** What a sequencer's answer said (the audit line's `answer`, the forward metrics' `outcome`): finer than its part's state. */
export const FORWARD_OUTCOMES = ['accepted', 'already_known', 'nonce_known', 'rejected', 'hash_mismatch', 'fault'] as const;
/** The sync method's parts add its own: a receipt (`executed`), or accepted without one in the wait. */
export type ForwardOutcome = (typeof FORWARD_OUTCOMES)[number] | 'executed' | 'accepted_no_receipt';

/** What established a definite part (the audit line's `rule`); `answer`: the sequencer's own refusal. */
export type Rule = 'hash' | 'lookup' | 'resend' | 'answer';

/** What one answer says, before any lookup or resend. */
export type Reading =
  /** Accepted by this answer alone (its hash, or for the sync method its receipt). */
  | { readonly kind: 'accepted'; readonly exit: Exit; readonly outcome: ForwardOutcome; readonly detail?: string | undefined }
  /** Ask the lookup: `confirmed` if it returns this transaction, else `unconfirmed` (the refusal, or null: nothing definite). */
  | {
      readonly kind: 'check';
      readonly confirmed: { readonly exit: Exit; readonly outcome: ForwardOutcome };
      readonly unconfirmed: Exit | null;
      readonly detail: string;
    }
  | { readonly kind: 'refused'; readonly exit: Exit; readonly detail: string }
  /** Written, and the answer says nothing definite (a fault after writing, another hash, garbage). */
  | { readonly kind: 'uncertain'; readonly outcome: 'fault' | 'hash_mismatch'; readonly detail: string; readonly transport?: boolean }
  | { readonly kind: 'not_sent'; readonly busy: boolean; readonly detail: string; readonly transport: boolean };

/**
 * Wordings that suggest the bytes may already be in the sequencer's pool or chain, from
 * geth/op-geth and erigon ("already known", "nonce too low"), reth and anvil ("transaction
 * already imported"), nethermind ("AlreadyKnown", "OldNonce"), besu ("Known transaction",
 * "Nonce too low"), nitro (geth's, "already exists"). They only choose to ask: the lookup decides.
 */
export const SUGGESTS_KNOWN = /already|known|exist|imported|nonce.{0,4}(?:too|is).{0,4}low|noncetoolow|oldnonce/i;

/** Where a lookup confirms, the plain send's acceptance: 200 with the hash. */
const plainConfirmed = (hash: string, detail: string): { exit: Exit; outcome: ForwardOutcome } => ({
  exit: result(hash),
  outcome: /nonce/i.test(detail) ? 'nonce_known' : 'already_known',
});

/** The reading of an eth_sendRawTransaction answer. */
export function readPlain(a: Answer, hash: string): Reading {
  if (a.kind === 'result') {
    // The hash as computed here (lower case) compared first: no lower-cased copy of the common answer.
    if (typeof a.result === 'string' && (a.result === hash || (a.result.length === 66 && a.result.toLowerCase() === hash))) return ACCEPTED(hash);
    return { kind: 'uncertain', outcome: 'hash_mismatch', detail: `answered ${preview(a.result)}, not the hash` };
  }
  if (a.kind === 'error') return readError(a, plainConfirmed(hash, a.message));
  return readFault(a);
}

/** A JSON-RPC error: a question for the lookup where its wording suggests the bytes are there, else a refusal. */
export function readError(a: Extract<Answer, { kind: 'error' }>, confirmed: { exit: Exit; outcome: ForwardOutcome }): Reading {
  const exit = upstreamRejected(a.code, a.message, a.data);
  const detail = a.message.length > 200 ? a.message.slice(0, 200) : a.message;
  if (SUGGESTS_KNOWN.test(a.message)) return { kind: 'check', confirmed, unconfirmed: exit, detail };
  return { kind: 'refused', exit, detail };
}

export function readFault(a: Extract<Answer, { kind: 'fault' }>): Reading {
  const transport = a.why.startsWith('transport');
  if (a.sent) return { kind: 'uncertain', outcome: 'fault', detail: a.why, transport };
  return { kind: 'not_sent', busy: a.busy === true, detail: a.why, transport };
}

/** The common path's reading. */
function ACCEPTED(hash: string): Reading {
  return { kind: 'accepted', exit: result(hash), outcome: 'accepted' };
}

/** What a lookup said of a hash: this very transaction, null, neither (`no_lookup`: none served, or garbage), or a fault. */
export type Known = 'known' | 'unknown' | 'no_lookup' | 'cannot_tell';

export function readLookup(a: Answer, hash: string): Known {
  if (a.kind === 'fault') return 'cannot_tell';
  if (a.kind === 'error') return 'no_lookup';
  if (a.result === null) return 'unknown';
  return isTxObject(a.result, hash) ? 'known' : 'no_lookup';
}

/** A transaction object of this very hash (an eth_getTransactionByHash result). */
export function isTxObject(v: unknown, hash: string): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const h = (v as { hash?: unknown }).hash;
  return typeof h === 'string' && h.length === 66 && h.toLowerCase() === hash;
}

/** 502: the sequencer may have the transaction and could not say (the client checks the receipt). */
export const uncertain = (hash: string): Exit => reject('upstream_error', undefined, { txHash: hash });

/** 503 when nothing was sent: overloaded (no connection in time) or unavailable. */
export const notSent = (busy: boolean): Exit => (busy ? REJECT.overloaded : REJECT.upstream_unavailable);

/** A peer's value in a log line: at most 80 characters, never a throw. */
export function preview(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 80 ? v.slice(0, 80) : v);
  return (safeJson(v) ?? 'an unprintable value').slice(0, 80);
}

/** A peer's value as text: a string as it is (at most 80 characters), anything else as preview() writes it. */
export function peerText(v: unknown): string {
  return typeof v === 'string' ? v.slice(0, 80) : preview(v);
}
