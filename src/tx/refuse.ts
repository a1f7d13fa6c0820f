/** The refusals of decode/verify: an invalid transaction, and @ethereumjs/tx's messages mapped to a stable reason. */
import { reject, type Exit } from '../base/errors.js';

export const invalid = (why: string): Exit => reject('invalid_transaction', `Invalid transaction: ${why}`);

/** Maps an @ethereumjs/tx error message to a stable reason. */
export function classify(message: string): Exit {
  const m = message.replace(/ \(tx type=.*$/s, '');
  if (/signature|y-parity|v value|s-values|recovery|v: /i.test(m)) return reject('invalid_signature', `Invalid signature: ${m}`);
  return reject('invalid_transaction', `Invalid transaction: ${m}`);
}
