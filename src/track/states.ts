/**
 * The states of a tracked transaction and the moves between them, written once: the tracker
 * moves an entry only along a row of TRANSITIONS (`move` refuses any other), and the table of
 * docs/tracking.md is rendered from these rows (`npm run readme`; a test fails when it differs).
 * A final state is left only by a reorg that takes its block (or its replacement's) out of the
 * canonical chain, and `dropped` also by a new acceptance of the same bytes (a resend).
 */

/** What the edge knows of a transaction it accepted. */
export type TrackState = 'pending' | 'preconfirmed' | 'included' | 'reverted' | 'replaced' | 'dropped' | 'expired';

/** Every state a status answer can carry: the tracked ones, and `unknown` (neither this edge nor the chain knows the hash). */
export type StatusName = TrackState | 'unknown';

export const STATES: Readonly<Record<StatusName, { readonly final: boolean; readonly means: string; readonly act: string }>> = {
  pending: {
    final: false,
    means: 'accepted by a sequencer, in no canonical block yet',
    act: 'Wait. Never resend different bytes with the same nonce unless you mean to replace it.',
  },
  preconfirmed: {
    final: false,
    means:
      "in a flashblock of the chain's builder (`chains[].flashblocks`, [flashblocks.md](flashblocks.md)): `flashblock` gives the block being built and the slice; no sealed block has it yet",
    act: "Act on it as the builder's word, not the chain's: `included` comes with the sealed block. Rarely, a sealed block leaves it out: back to `pending`, and you are told.",
  },
  included: {
    final: true,
    means: 'in a canonical block, its receipt status 1 (success)',
    act: 'Done. A reorg may still take it out: the status goes back to `pending` and you are told.',
  },
  reverted: {
    final: true,
    means: 'in a canonical block, its receipt status 0: the nonce and the fee are spent, the call failed',
    act: 'Final for these bytes: read the revert on your node, fix the call, send a new transaction with the next nonce.',
  },
  replaced: {
    final: true,
    means: 'another transaction of the same sender and nonce was included (`replacedBy`)',
    act: 'Final: this one can never be included. If you did not send the replacement, your key is used elsewhere.',
  },
  dropped: {
    final: true,
    means: 'not included within `dropAfterBlocks` and `dropAfterMs`, and the chain no longer knows the hash; its nonce is unused',
    act: 'Not on chain and not in the pool: send it again (the same bytes are safe) or replace it.',
  },
  expired: {
    final: true,
    means:
      'a conditional transaction ([conditional.md](conditional.md)) whose `blockNumberMax` or `timestampMax` the canonical chain passed while no block had it (`expiredBy`)',
    act: 'Final: it can never be included; its nonce is unused. Send a new quote.',
  },
  unknown: {
    final: false,
    means: 'neither this edge (for your account) nor the chain RPC knows the hash',
    act: 'Ask the edge that accepted it, or wait and ask again: a transaction the chain has not seen yet is unknown to it.',
  },
};

export interface Transition {
  readonly from: TrackState | null;
  readonly to: TrackState;
  readonly when: string;
}

/** Every move the tracker makes; `from: null` is the start of tracking. */
export const TRANSITIONS: readonly Transition[] = [
  { from: null, to: 'pending', when: 'a sequencer accepted it (the rule: `hash`, `lookup` or `resend`)' },
  { from: 'pending', to: 'preconfirmed', when: "a slice of the chain's flashblocks stream carries it, for a block not yet sealed" },
  { from: 'pending', to: 'included', when: 'its hash is in a new canonical block and its receipt says status 1' },
  { from: 'preconfirmed', to: 'included', when: 'its hash is in a new canonical block and its receipt says status 1' },
  { from: 'preconfirmed', to: 'reverted', when: 'its hash is in a new canonical block and its receipt says status 0' },
  {
    from: 'preconfirmed',
    to: 'pending',
    when: 'the sealed block of its number does not carry it (a preconfirmation lost at sealing, counted), or a later block was applied before its own',
  },
  { from: 'pending', to: 'reverted', when: 'its hash is in a new canonical block and its receipt says status 0' },
  {
    from: 'pending',
    to: 'replaced',
    when: 'past its thresholds the chain does not know the hash, and its sender nonce was used by another transaction',
  },
  { from: 'pending', to: 'dropped', when: 'past its thresholds the chain does not know the hash, and its sender nonce is unused' },
  {
    from: 'pending',
    to: 'expired',
    when: 'a conditional transaction: a canonical block passed its `blockNumberMax` or `timestampMax`, and the chain has it in no block',
  },
  { from: 'included', to: 'pending', when: 'a reorg took its block out of the canonical chain' },
  { from: 'reverted', to: 'pending', when: 'a reorg took its block out of the canonical chain' },
  { from: 'replaced', to: 'pending', when: "a reorg took the replacement's block out of the canonical chain" },
  { from: 'dropped', to: 'pending', when: 'a sequencer accepted the same bytes again (a resend after `dropped`): followed from this acceptance on' },
  { from: 'expired', to: 'pending', when: 'a reorg or a rollback took the chain back to its bound' },
];

const ALLOWED = new Set(TRANSITIONS.map((t) => `${t.from}>${t.to}`));

/** Whether the tracker may move an entry from `from` to `to`. */
export function mayMove(from: TrackState | null, to: TrackState): boolean {
  return ALLOWED.has(`${from}>${to}`);
}

export const isFinal = (s: StatusName): boolean => STATES[s].final;

/** In no canonical block yet: pending, or preconfirmed by a flashblock (the watcher looks for both in each block). */
export const inNoBlock = (s: TrackState): boolean => s === 'pending' || s === 'preconfirmed';

/** The transitions as a Markdown table (docs/tracking.md, rendered by `npm run readme`). */
export function transitionsTable(): string {
  const rows = TRANSITIONS.map((t) => `| ${t.from === null ? '(accepted)' : `\`${t.from}\``} | \`${t.to}\` | ${t.when} |`);
  return ['| from | to | when |', '|---|---|---|', ...rows].join('\n');
}

/** The states as a Markdown table (docs/tracking.md, rendered by `npm run readme`). */
export function statesTable(): string {
  const rows = (Object.keys(STATES) as StatusName[]).map((s) => `| \`${s}\` | ${STATES[s].final ? 'yes' : 'no'} | ${STATES[s].means} | ${STATES[s].act} |`);
  return ['| status | final | what it means | what to do |', '|---|---|---|---|', ...rows].join('\n');
}
