/**
 * The options of `eth_sendRawTransactionConditional` (docs/conditional.md#the-request), read and
 * checked before anything is sent: their shapes, their cost against the chain's cap, and ranges
 * that nothing can meet. What a sequencer checks against its state (the roots, the slots, the
 * special keys) is never checked here; the options go on exactly as they came.
 *
 * - `knownAccounts`: an object of 20-byte addresses (0x and 40 hex digits), each to a 32-byte
 *   storage root (0x and 64 hex digits) or to an object of 32-byte slots to 32-byte values,
 *   where the special keys `balance` and `nonce` (quantities) and `code` (0x-hex bytes, or "")
 *   may stand beside the slots;
 * - `blockNumberMin`, `blockNumberMax` (quantities of up to 256 bits), `timestampMin`,
 *   `timestampMax` (quantities of up to 64 bits): inclusive bounds; null is absent;
 * - nothing else: another member is refused by name, rather than dropped unseen.
 *
 * The cost is the sequencer's count of the lookups the options ask for: 1 per account, plus 1
 * for its root or 1 per slot (a special key counts as a slot), plus 1 for a block range and 1 for
 * a time range. Past `maxCost`: -32005 `conditions_too_costly`.
 */
import { type Exit, reject } from '../base/errors.js';

/** The options as the edge reads them: the bounds it can check itself, and the text it forwards. */
export interface Conditions {
  /** The options as JSON, forwarded unchanged (the members and values as the client wrote them). */
  readonly json: string;
  readonly blockNumberMin: bigint | null;
  readonly blockNumberMax: bigint | null;
  readonly timestampMin: bigint | null;
  readonly timestampMax: bigint | null;
  readonly cost: number;
}

const MEMBERS = new Set(['knownAccounts', 'blockNumberMin', 'blockNumberMax', 'timestampMin', 'timestampMax']);
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const WORD = /^0x[0-9a-fA-F]{64}$/;
/** A quantity: 0x and hex digits, no leading zero (0x0 alone). */
const QUANTITY = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/;
const BYTES = /^(?:0x(?:[0-9a-fA-F]{2})*)?$/;
const SPECIAL = new Set(['balance', 'nonce', 'code']);

const bad = (what: string): Exit => reject('invalid_params', `Invalid params: eth_sendRawTransactionConditional options: ${what}`);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A quantity of at most `bits` bits, null when absent, or the refusal. */
function quantity(v: unknown, name: string, bits: number): bigint | null | Exit {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !QUANTITY.test(v) || v.length - 2 > bits / 4)
    return bad(`${name} must be a quantity (0x-hex, no leading zeros, at most ${bits} bits)`);
  return BigInt(v);
}

/** The cost of one account's condition, or the refusal of its shape. */
function accountCost(addr: string, v: unknown): number | Exit {
  if (!ADDRESS.test(addr)) return bad(`knownAccounts key ${JSON.stringify(addr.slice(0, 50))} is not an address (0x and 40 hex digits)`);
  if (typeof v === 'string') return WORD.test(v) ? 2 : bad(`knownAccounts[${addr}] must be a storage root (0x and 64 hex digits) or an object of slots`);
  if (!isObject(v)) return bad(`knownAccounts[${addr}] must be a storage root (0x and 64 hex digits) or an object of slots`);
  let slots = 0;
  for (const k in v) {
    const value = v[k];
    if (SPECIAL.has(k)) {
      const ok = k === 'code' ? typeof value === 'string' && BYTES.test(value) : typeof value === 'string' && QUANTITY.test(value) && value.length <= 66;
      if (!ok) return bad(`knownAccounts[${addr}].${k} must be ${k === 'code' ? '0x-hex bytes or ""' : 'a quantity'}`);
    } else if (!WORD.test(k)) return bad(`knownAccounts[${addr}] key ${JSON.stringify(k.slice(0, 70))} is not a slot (0x and 64 hex digits)`);
    else if (typeof value !== 'string' || !WORD.test(value)) return bad(`knownAccounts[${addr}][${k}] must be a value (0x and 64 hex digits)`);
    slots++;
  }
  return 1 + slots;
}

/** The options checked, or the answer that refuses them (nothing sent). */
export function readConditions(v: unknown, maxCost: number): Conditions | Exit {
  if (!isObject(v)) return bad('must be an object');
  for (const k in v) if (!MEMBERS.has(k)) return bad(`unknown member ${JSON.stringify(k.slice(0, 50))}`);
  const bMin = quantity(v.blockNumberMin, 'blockNumberMin', 256);
  const bMax = quantity(v.blockNumberMax, 'blockNumberMax', 256);
  const tMin = quantity(v.timestampMin, 'timestampMin', 64);
  const tMax = quantity(v.timestampMax, 'timestampMax', 64);
  for (const q of [bMin, bMax, tMin, tMax]) if (q !== null && typeof q !== 'bigint') return q;
  let cost = (bMin !== null || bMax !== null ? 1 : 0) + (tMin !== null || tMax !== null ? 1 : 0);
  const known = v.knownAccounts;
  if (known !== undefined && known !== null) {
    if (!isObject(known)) return bad('knownAccounts must be an object of addresses');
    for (const addr in known) {
      const c = accountCost(addr, known[addr]);
      if (typeof c !== 'number') return c;
      cost += c;
      if (cost > maxCost) break;
    }
  }
  if (cost > maxCost)
    return reject('conditions_too_costly', `Limit exceeded: the conditions cost more than ${maxCost} (1 per account, 1 per root or slot, 1 per range)`, {
      maxCost,
    });
  const [blockNumberMin, blockNumberMax, timestampMin, timestampMax] = [bMin, bMax, tMin, tMax] as (bigint | null)[];
  if (blockNumberMin !== null && blockNumberMax !== null && blockNumberMin! > blockNumberMax!) return bad('blockNumberMin is above blockNumberMax');
  if (timestampMin !== null && timestampMax !== null && timestampMin! > timestampMax!) return bad('timestampMin is above timestampMax');
  return {
    json: JSON.stringify(v),
    blockNumberMin: blockNumberMin!,
    blockNumberMax: blockNumberMax!,
    timestampMin: timestampMin!,
    timestampMax: timestampMax!,
    cost,
  };
}
