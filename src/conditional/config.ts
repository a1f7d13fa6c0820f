/**
 * The `chains[].conditional` section (off unless a deployment turns it on): whether the chain
 * serves `eth_sendRawTransactionConditional` (docs/conditional.md), the cap on the conditions'
 * cost, and how fresh the chain's head must be for the edge to refuse a quote it has passed.
 * Declared once here; config-schema.ts composes it into each chain.
 */
import { bool, int, type Section, type Values } from '../base/config-fields.js';

export const CONDITIONAL = {
  enabled: bool(
    false,
    'serve `eth_sendRawTransactionConditional` on this chain to the grants that have `conditional` ([conditional.md](conditional.md); off: 400 `method_not_found`)',
  ),
  maxCost: int(
    1000,
    1,
    100_000,
    "the conditions' cost a submission may carry: 1 per `knownAccounts` entry, plus 1 for its root or 1 per slot, plus 1 for a block range and 1 for a time range; past it -32005 `conditions_too_costly`, not sent",
  ),
  headMaxAgeMs: int(
    3000,
    100,
    600_000,
    "the oldest the chain's head may be for the edge to refuse a `blockNumberMax`/`timestampMax` it has passed; an older head (or none) refuses nothing: the sequencer decides",
  ),
  headPollMs: int(
    500,
    50,
    60_000,
    'how often the chain RPC (`chains[].rpc`) is asked for its latest block, for the check above, while no head subscription (`rpcWs`) is live',
  ),
} satisfies Section;

export type ConditionalConfig = Values<typeof CONDITIONAL>;
