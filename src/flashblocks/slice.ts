/**
 * A flashblock as its builders write it, read from whatever a stream sends (a hostile peer: any
 * JSON, any size up to the frame bound), and the order of the slices of the block being built.
 * The shapes, both directions, are pinned by flashbots/op-rbuilder
 * `crates/op-rbuilder/src/builder/wspub.rs` (its `golden_wire` tests) over alloy-rs/op-alloy
 * `crates/rpc-types-engine/src/flashblock/` (`OpFlashblockPayload`: `payload_id`, `index`, `base`
 * only at index 0, `diff`, `metadata`):
 *
 *   {"payload_id":"0x0a0a0a0a0a0a0a0a","index":0,
 *    "base":{…,"block_number":"0x64",…},
 *    "diff":{…,"transactions":["0x7e010203"],…},
 *    "metadata":{"block_number":100,"new_account_balances":{…},
 *                "receipts":{"0x11…11":{"type":"0x7e","status":"0x1","cumulativeGasUsed":"0xc350","logs":[]}}}}
 *
 * `base.block_number` is a hex quantity, `metadata.block_number` a JSON number; an older form
 * wraps a receipt by its kind (`{"Eip1559":{…}}`). Base documents `metadata` as not stable, so
 * what a slice holds is its own `diff.transactions` (hashed here); a receipt found for one of them
 * gives its status, and a receipt for a hash the slice does not carry is ignored (counted).
 */
import { hexData, quantity } from '../base/rpc-values.js';

/** A receipt as a slice's metadata carries it, read: its status where it says one (1 success, 0 reverted). */
export interface SliceReceipt {
  readonly status: 0 | 1 | null;
  /** Its fields as the builder gave them (`type`, `status`, `cumulativeGasUsed`, `logs`; the older form unwrapped). */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** A frame read as a flashblock: its payload, index, the base's block number (index 0), its signed transactions (hex). */
export interface Slice {
  readonly payloadId: string;
  readonly index: number;
  /** `base.block_number` where the slice has a base (index 0), else null. */
  readonly baseNumber: number | null;
  /** `metadata.block_number` where it is a safe integer, else null (read only to join a stream mid-block: `Building`). */
  readonly metaNumber: number | null;
  readonly txs: readonly string[];
  /** `metadata.receipts`, unread until a hash is asked for (an object of the frame's own; null when absent). */
  readonly receipts: Readonly<Record<string, unknown>> | null;
}

/** Slices a block may have at most: Base publishes ten per 2-s block; past this a stream is not one. */
export const MAX_INDEX = 1_000;

const PAYLOAD_ID = /^0x[0-9a-fA-F]{16}$/;
/** The older, externally tagged receipt kinds and the `type` each stands for. */
const KINDS: Readonly<Record<string, string>> = { Legacy: '0x0', Eip2930: '0x1', Eip1559: '0x2', Eip7702: '0x4', Deposit: '0x7e' };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A parsed frame as a slice, or null when it is not one (any field of the shape missing or of another type). */
export function readSlice(v: unknown): Slice | null {
  if (!isObject(v)) return null;
  const id = v.payload_id;
  const index = v.index;
  if (typeof id !== 'string' || !PAYLOAD_ID.test(id)) return null;
  if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0 || index > MAX_INDEX) return null;
  const diff = v.diff;
  if (!isObject(diff) || !Array.isArray(diff.transactions)) return null;
  const txs: string[] = [];
  for (const t of diff.transactions) {
    const hex = hexData(t);
    if (hex === null || hex.length < 4) return null;
    txs.push(hex);
  }
  let baseNumber: number | null = null;
  if (index === 0) {
    if (!isObject(v.base)) return null;
    baseNumber = quantity(v.base.block_number);
    if (baseNumber === null) return null;
  }
  const meta = v.metadata;
  const receipts = isObject(meta) && isObject(meta.receipts) ? meta.receipts : null;
  const n = isObject(meta) ? meta.block_number : undefined;
  const metaNumber = typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : null;
  return { payloadId: id.toLowerCase(), index, baseNumber, txs, receipts, metaNumber };
}

/** The receipt of `hash` in a slice's metadata, read (either form), or null (none, or not a receipt). */
export function receiptOf(receipts: Readonly<Record<string, unknown>> | null, hash: string): SliceReceipt | null {
  if (receipts === null) return null;
  // Keys as the builder wrote them: lower-case hex; a mixed-case key is looked up as written too.
  const r = Object.hasOwn(receipts, hash) ? receipts[hash] : undefined;
  if (!isObject(r)) return null;
  let fields: Record<string, unknown> = r;
  if (!('status' in r)) {
    const keys = Object.keys(r);
    const inner = keys.length === 1 ? r[keys[0]!] : undefined;
    if (!isObject(inner) || !Object.hasOwn(KINDS, keys[0]!)) return null;
    fields = { type: KINDS[keys[0]!], ...inner };
  }
  const s = fields.status;
  const status = s === '0x1' || s === true ? 1 : s === '0x0' || s === false ? 0 : null;
  return { status, fields };
}

/** What the order of slices makes of one: read (with the block's number), or why it is not. */
export type Placed = { readonly kind: 'read'; readonly number: number; readonly gap: boolean } | { readonly kind: 'unknown_payload' | 'out_of_order' };

/**
 * The block being built, as the slices tell it: index 0 (with its base) starts a payload; a later
 * index belongs to the payload started, in order. Joined mid-block (a new connection, no payload
 * followed yet), a later index with `metadata.block_number` starts following its payload (the
 * slices before it missed: `gap`). A later index of another payload than the one followed, or one
 * without a block number before any was followed, is `unknown_payload` (not read); an
 * index already read is `out_of_order` (not read again); an index past the next one is read
 * (its transactions are in, its order locked) and said (`gap`: the slices between were missed).
 */
export class Building {
  private payloadId: string | null = null;
  private number = -1;
  private next = 0;

  place(s: Slice): Placed {
    if (s.index === 0) {
      this.payloadId = s.payloadId;
      this.number = s.baseNumber!;
      this.next = 1;
      return { kind: 'read', number: this.number, gap: false };
    }
    if (this.payloadId === null && s.metaNumber !== null) {
      this.payloadId = s.payloadId;
      this.number = s.metaNumber;
      this.next = s.index + 1;
      return { kind: 'read', number: this.number, gap: true };
    }
    if (s.payloadId !== this.payloadId) return { kind: 'unknown_payload' };
    if (s.index < this.next) return { kind: 'out_of_order' };
    const gap = s.index > this.next;
    this.next = s.index + 1;
    return { kind: 'read', number: this.number, gap };
  }

  /** A new connection: the payload being built is learned again from its next index 0. */
  reset(): void {
    this.payloadId = null;
    this.number = -1;
    this.next = 0;
  }
}
