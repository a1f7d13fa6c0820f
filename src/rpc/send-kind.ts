/**
 * The three kinds of send a request can be: the plain `eth_sendRawTransaction`,
 * `eth_sendRawTransactionSync` with the wait the client asked for (docs/design.md §6.2), and
 * `eth_sendRawTransactionConditional` with its options (§6.7). The route stage says which on the
 * context (its `send` field); the grant, conditions and forward stages read that field. A leaf
 * module: it reads nothing.
 */
/** What kind of send a request is: plain, or sync with the wait it gets (ms), or conditional. */
export type Send =
  | { readonly kind: 'plain' }
  /** `sealed`: on a chain with flashblocks, the sealed block's receipt asked for, not the preconfirmation's (docs/flashblocks.md). */
  | { readonly kind: 'sync'; readonly waitMs: number; readonly sealed?: true }
  /** eth_sendRawTransactionConditional: its options as sent, read by the conditions stage (stages/conditions.ts). */
  | { readonly kind: 'conditional'; readonly options: unknown };

/** Every plain send shares this one value (nothing allocated per request). */
export const PLAIN_SEND: Send = Object.freeze({ kind: 'plain' });

/**
 * The wait a client asked for (the sync method's optional second param: ms as an integer or as
 * 0x-hex), capped by `max`; `max` when absent; undefined when malformed.
 */
export function requestedWaitMs(p: unknown, max: number): number | undefined {
  if (p === undefined || p === null) return max;
  let ms: number;
  if (typeof p === 'number') ms = p;
  else if (typeof p === 'string' && /^0x[0-9a-fA-F]{1,12}$/.test(p)) ms = Number.parseInt(p.slice(2), 16);
  else if (typeof p === 'string' && /^\d{1,12}$/.test(p)) ms = Number(p);
  else return undefined;
  if (!Number.isSafeInteger(ms) || ms <= 0) return undefined;
  return Math.min(ms, max);
}
