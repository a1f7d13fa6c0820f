/**
 * The request line's fields that repeat from one request to the next (docs/observability.md,
 * Logs: the request line), each one piece of JSON text built once (log/log-line.ts's `Piece`):
 * the method where it is one of the two the line writes as it is, the status, the chain, the
 * account. A field then costs the line one concatenation instead of two; the text is the same.
 * Bounded: statuses and methods are the code's own, chains the configuration's, and an account's
 * piece is kept while the account is (a reloaded account is a new object).
 */
import { piece, type Piece } from '../log/log-line.js';

const STATUSES = new Map<number, Piece>();
const CHAINS = new Map<number, Piece>();
const METHODS = new Map<string, Piece>();
/** By the account object (the pipeline's `ctx.account`). */
const ACCOUNTS = new WeakMap<{ readonly id: string }, Piece>();
/** Statuses and chains kept (a bound all the same; past it each line builds its own). */
const KEPT = 256;

/** `,"status":N`. */
export function statusField(status: number): Piece {
  let p = STATUSES.get(status);
  if (p === undefined) {
    p = piece(',"status":' + status);
    if (STATUSES.size < KEPT) STATUSES.set(status, p);
  }
  return p;
}

/** `,"chainId":N`. */
export function chainField(chainId: number): Piece {
  let p = CHAINS.get(chainId);
  if (p === undefined) {
    p = piece(',"chainId":' + chainId);
    if (CHAINS.size < KEPT) CHAINS.set(chainId, p);
  }
  return p;
}

/** `,"method":"…"` of a method the code names (one that needs no escaping). */
export function methodField(method: string): Piece {
  let p = METHODS.get(method);
  if (p === undefined) {
    p = piece(',"method":"' + method + '"');
    if (METHODS.size < KEPT) METHODS.set(method, p);
  }
  return p;
}

/** `,"account":"…"` (account ids need no escaping: what the request line's `str` wrote). */
export function accountField(account: { readonly id: string }): Piece {
  let p = ACCOUNTS.get(account);
  if (p === undefined) ACCOUNTS.set(account, (p = piece(',"account":"' + account.id + '"')));
  return p;
}
