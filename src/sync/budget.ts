/**
 * How a forward-mode sync call spends its wait (docs/design.md §6.2: "the wait a client asks for
 * is the wait it gets"): the sequencer holds the call for the first part, and settling a call cut
 * without an answer (the lookup, a resend) takes the rest, never a forward timeout after it.
 */

/** The most of a wait set aside for settling an answer-less call: a quarter. */
const SETTLE_SHARE = 4;

export interface SyncBudget {
  /** How long the sequencer may hold the call (the wait it is told where the format tells it). */
  readonly sequencerMs: number;
  /** What is left for the lookup and the resends after it. */
  readonly settleMs: number;
}

/**
 * The split of `waitMs` (≥ 1): settling gets a quarter, at most `forwardTimeoutMs`, at least 1 ms;
 * the sequencer the rest. The two add up to the wait (a wait of 1 ms: 1 each, the least either can be).
 */
export function syncBudget(waitMs: number, forwardTimeoutMs: number): SyncBudget {
  const settleMs = Math.max(1, Math.min(forwardTimeoutMs, Math.floor(waitMs / SETTLE_SHARE)));
  return { sequencerMs: Math.max(1, waitMs - settleMs), settleMs };
}

/** The wait a sequencer is told when it may hold the call `heldMs`: a tenth less, at most 100 ms less, so its own answer comes before the cut. */
export function toldWaitMs(heldMs: number): number {
  return Math.max(1, heldMs - Math.min(100, Math.floor(heldMs / 10)));
}
