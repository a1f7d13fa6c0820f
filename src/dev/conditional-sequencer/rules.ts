/**
 * ERC-7796's conditions as an OP Stack sequencer checks them (op-geth), for the development
 * sequencer (server.ts): written from these files of github.com/ethereum-optimism/op-geth:
 *
 * - internal/sequencerapi/api.go (SendRawTransactionConditional): the cost first (past
 *   params.TransactionConditionalMaxCost: -32005 "conditional cost, N, exceeded max: 1000"), then
 *   Validate (-32003 "failed conditional validation: …"), then the header check against the
 *   latest block (-32003 "failed header check: …"), then the state check (-32003 "failed state
 *   check: …"), then the transaction submitted;
 * - core/types/transaction_conditional.go: the shapes (a root, or a map of slot → value), Cost
 *   (1 per account, +1 for a root or +1 per slot, +1 for a block range, +1 for a time range) and
 *   Validate (min above max);
 * - core/types/block.go (Header.CheckTransactionConditional): inclusive bounds on the latest
 *   header's number and time;
 * - core/state/statedb.go (StateDB.CheckTransactionConditional): the storage root
 *   (eth_getProof's storageHash here) and each slot (eth_getStorageAt here);
 * - params/conditional_tx_params.go: 1000, -32003, -32005.
 *
 * The special keys of ERC-7796 (`balance`, `nonce`, `code`) are checked against the chain
 * (eth_getBalance, eth_getTransactionCount, eth_getCode), as the ERC writes them. Whatever the
 * options hold, a check ends in a result or an RpcError (-32602 for a value it cannot read),
 * never another throw: the options come from a client.
 */

/** params.TransactionConditionalMaxCost. */
export const MAX_COST = 1000;
/** params.TransactionConditionalRejectedErrCode and ...CostExceededMaxErrCode. */
export const CONDITIONS_REFUSED = -32003;
export const COST_EXCEEDED = -32005;

/** A JSON-RPC error the sequencer answers with. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Reads the chain: a method's result, or its error thrown (an RpcError). */
export type ChainRead = (method: string, params: unknown[]) => Promise<unknown>;

type Known = Record<string, unknown>;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** TransactionConditional.Cost (an entry that is neither a root nor an object of slots counts as a root). */
export function conditionalCost(o: Record<string, unknown>): number {
  let cost = 0;
  const known = isObj(o.knownAccounts) ? (o.knownAccounts as Known) : {};
  for (const v of Object.values(known)) cost += 1 + (isObj(v) ? Object.keys(v).length : 1);
  if (o.blockNumberMin != null || o.blockNumberMax != null) cost += 1;
  if (o.timestampMin != null || o.timestampMax != null) cost += 1;
  return cost;
}

/** A quantity of the options (a 0x-hex string, or a JSON number), or null when absent; anything else -32602. */
function quantity(v: unknown, name: string): bigint | null {
  if (v == null) return null;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(v)) return BigInt(v);
  throw new RpcError(-32602, `invalid argument: ${name} must be a quantity`);
}

/** A 32-byte hex value (a root, a slot, a slot's value), or -32602. */
function word(v: unknown, name: string): bigint {
  if (typeof v === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(v)) return BigInt(v);
  throw new RpcError(-32602, `invalid argument: ${name} must be 0x and up to 64 hex digits`);
}

/** A value the chain answered, as a number (a chain that answers otherwise is a -32000, never a throw). */
function chainQuantity(v: unknown, what: string): bigint {
  if (typeof v === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(v)) return BigInt(v);
  throw new RpcError(-32000, `the chain answered ${what} with something that is not a quantity`);
}

/**
 * op-geth's checks of the options (api.go's order: the cost, Validate, the header, the state),
 * against the chain `read` asks; throws the sequencer's JSON-RPC error (RpcError) when one fails.
 */
export async function checkConditions(read: ChainRead, o: Record<string, unknown>): Promise<void> {
  const cost = conditionalCost(o);
  if (cost > MAX_COST) throw new RpcError(COST_EXCEEDED, `conditional cost, ${cost}, exceeded max: ${MAX_COST}`);
  const bMin = quantity(o.blockNumberMin, 'blockNumberMin');
  const bMax = quantity(o.blockNumberMax, 'blockNumberMax');
  const tMin = quantity(o.timestampMin, 'timestampMin');
  const tMax = quantity(o.timestampMax, 'timestampMax');
  if (o.knownAccounts != null && !isObj(o.knownAccounts)) throw new RpcError(-32602, 'invalid argument: knownAccounts must be an object');
  if (bMin !== null && bMax !== null && bMin > bMax)
    throw new RpcError(CONDITIONS_REFUSED, 'failed conditional validation: block number minimum constraint must be less than the maximum');
  if (tMin !== null && tMax !== null && tMin > tMax)
    throw new RpcError(CONDITIONS_REFUSED, 'failed conditional validation: timestamp minimum constraint must be less than the maximum');
  const head = await read('eth_getBlockByNumber', ['latest', false]);
  if (!isObj(head)) throw new RpcError(-32000, 'the chain has no latest block');
  const n = chainQuantity(head.number, 'the latest block number');
  const t = chainQuantity(head.timestamp, 'the latest block timestamp');
  const header = (why: string) => new RpcError(CONDITIONS_REFUSED, `failed header check: ${why}`);
  if (bMin !== null && bMin > n) throw header('failed block number minimum constraint');
  // op-geth's own spelling.
  if (bMax !== null && bMax < n) throw header('failed block number maximmum constraint');
  if (tMin !== null && tMin > t) throw header('failed timestamp minimum constraint');
  if (tMax !== null && tMax < t) throw header('failed timestamp maximum constraint');
  for (const [addr, want] of Object.entries((o.knownAccounts ?? {}) as Known)) {
    if (!/^0x[0-9a-fA-F]{40}$/.test(addr)) throw new RpcError(-32602, 'invalid argument: a knownAccounts key must be an address');
    if (!isObj(want)) {
      const root = word(want, `the storage root of ${addr}`);
      const proof = await read('eth_getProof', [addr, [], 'latest']);
      const got = isObj(proof) ? chainQuantity(proof.storageHash, 'the storage root') : null;
      if (got !== root)
        throw new RpcError(
          CONDITIONS_REFUSED,
          `failed state check: failed account storage root constraint. Got 0x${(got ?? 0n).toString(16).padStart(64, '0')}, Expected 0x${root.toString(16).padStart(64, '0')}`,
        );
      continue;
    }
    for (const [key, value] of Object.entries(want)) {
      let holds: boolean;
      if (key === 'balance') holds = chainQuantity(await read('eth_getBalance', [addr, 'latest']), 'a balance') === quantity(value, 'balance');
      else if (key === 'nonce') holds = chainQuantity(await read('eth_getTransactionCount', [addr, 'latest']), 'a nonce') === quantity(value, 'nonce');
      else if (key === 'code') {
        if (typeof value !== 'string') throw new RpcError(-32602, 'invalid argument: code must be a hex string');
        const code = await read('eth_getCode', [addr, 'latest']);
        holds = String(code).toLowerCase().replace(/^0x$/, '') === value.toLowerCase().replace(/^0x$/, '');
      } else {
        word(key, 'a slot');
        const v = word(value, `the value of slot ${key.slice(0, 66)}`);
        holds = chainQuantity(await read('eth_getStorageAt', [addr, key, 'latest']), 'a slot') === v;
      }
      if (!holds) throw new RpcError(CONDITIONS_REFUSED, `failed state check: failed account storage slot key ${key.slice(0, 66)} constraint`);
    }
  }
}
