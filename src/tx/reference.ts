/**
 * The reference path: @ethereumjs/tx's own constructors and validation (with the native crypto
 * of crypto.ts), for legacy, 0x01 and 0x04 envelopes, and for 0x02 where the lean path does not
 * model the fork. It always recovers the sender.
 */
import type { Common } from '@ethereumjs/common';
import {
  create1559FeeMarketTxFromBytesArray,
  createAccessList2930TxFromBytesArray,
  createEOACode7702TxFromBytesArray,
  createLegacyTxFromBytesArray,
} from '@ethereumjs/tx';
import { REJECT, type Exit } from '../base/errors.js';
import { keccak256 } from '../base/native.js';
import { classify } from './refuse.js';
import { type Bytes, hex, type Values } from './rlp.js';
import type { DecodedTx } from './types.js';

/** The reference path: @ethereumjs/tx constructors and validation. */
export function referenceDecode(common: Common, bytes: Bytes, type: number, values: Values): DecodedTx | Exit {
  const opts = { common };
  // biome-ignore lint/suspicious/noExplicitAny: four @ethereumjs/tx classes, used through their common methods
  let tx: any;
  try {
    const vals = values as never;
    tx =
      type === 0
        ? createLegacyTxFromBytesArray(vals, opts)
        : type === 1
          ? createAccessList2930TxFromBytesArray(vals, opts)
          : type === 2
            ? create1559FeeMarketTxFromBytesArray(vals, opts)
            : createEOACode7702TxFromBytesArray(vals, opts);
  } catch (e) {
    return classify((e as Error).message);
  }
  if (!tx.isSigned()) return REJECT.unsigned_transaction;
  const errors: string[] = tx.getValidationErrors();
  if (errors.length > 0) return classify(errors.join('; '));
  let from: string;
  try {
    from = tx.getSenderAddress().toString();
  } catch (e) {
    return classify((e as Error).message);
  }
  return {
    type,
    hash: '0x' + hex(keccak256(bytes)),
    sender: () => from,
    chainId: type === 0 ? (tx.common.chainId() as bigint) : (tx.chainId as bigint),
    nonce: tx.nonce,
    to: tx.to === undefined ? null : tx.to.toString(),
    value: tx.value,
    data: tx.data,
    gasLimit: tx.gasLimit,
  };
}
