/**
 * The request line's fields that repeat from one request to the next (docs/observability.md,
 * Logs: the request line), each one piece of JSON text built once (log/log-line.ts's `Piece`):
 * the method where it is one of the two the line writes as it is, the status, the chain, the
 * account. A field then costs the line one concatenation instead of two; the text is the same.
 * Bounded: statuses and methods are the code's own, chains the configuration's (256 of each kept,
 * log-line.ts's `piecesBy`), and an account's piece is kept while the account is (a reloaded
 * account is a new object).
 */
import { piece, piecesBy, type Piece } from '../log/log-line.js';

/** By the account object (the pipeline's `ctx.account`). */
const ACCOUNTS = new WeakMap<{ readonly id: string }, Piece>();

/** `,"status":N`. */
export const statusField = piecesBy((status: number) => ',"status":' + status);

/** `,"chainId":N`. */
export const chainField = piecesBy((chainId: number) => ',"chainId":' + chainId);

/** `,"method":"…"` of a method the code names (one that needs no escaping). */
export const methodField = piecesBy((method: string) => ',"method":"' + method + '"');

/** `,"account":"…"` (account ids need no escaping: what the request line's `str` wrote). */
export function accountField(account: { readonly id: string }): Piece {
  let p = ACCOUNTS.get(account);
  if (p === undefined) ACCOUNTS.set(account, (p = piece(',"account":"' + account.id + '"')));
  return p;
}

/**
 * `,"method":"…","status":N,"us":` as one piece, for the microseconds after it (LogLine.jsonAfter):
 * the three run together on every answered request. By method (one the code names), then status.
 */
const METHOD_STATUS = new Map<string, (status: number) => Piece>();
export function methodStatusUsKey(method: string, status: number): Piece {
  let byStatus = METHOD_STATUS.get(method);
  if (byStatus === undefined) {
    const m = ',"method":"' + method + '","status":';
    byStatus = piecesBy((s: number) => m + s + ',"us":');
    if (METHOD_STATUS.size < 256) METHOD_STATUS.set(method, byStatus);
  }
  return byStatus(status);
}

/**
 * `,"chainId":N,"account":"…"` as one piece (an authenticated request's chain and account run
 * together), and the same with `,"tx":"` left open for the hash after it (LogLine.strAfter): kept
 * with the account, by chain.
 */
const CHAIN_ACCOUNTS = new WeakMap<{ readonly id: string }, readonly [(chainId: number) => Piece, (chainId: number) => Piece]>();
export function chainAccountFields(chainId: number, account: { readonly id: string }, txKey = false): Piece {
  let byChain = CHAIN_ACCOUNTS.get(account);
  if (byChain === undefined) {
    const a = ',"account":"' + account.id + '"';
    CHAIN_ACCOUNTS.set(account, (byChain = [piecesBy((c: number) => ',"chainId":' + c + a), piecesBy((c: number) => ',"chainId":' + c + a + ',"tx":"')]));
  }
  return byChain[txKey ? 1 : 0](chainId);
}
