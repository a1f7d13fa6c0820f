/** The refusals of decode/verify: an invalid transaction, and @ethereumjs/tx's messages mapped to a stable reason. */
import { reject, type Exit } from '../base/errors.js';

export const invalid = (why: string): Exit => reject('invalid_transaction', `Invalid transaction: ${why}`);

/** Maps an @ethereumjs/tx error message to a stable reason. */
export function classify(message: string): Exit {
  const m = message.replace(/ \(tx type=.*$/s, '');
  if (/signature|y-parity|v value|s-values|recovery|v: /i.test(m)) return reject('invalid_signature', `Invalid signature: ${m}`);
  return reject('invalid_transaction', `Invalid transaction: ${m}`);
}

/** A chain id as people read it: decimal and hex; one too long to be a chain id, by its size. */
function chainIdText(id: bigint): string {
  const hex = id.toString(16);
  return hex.length <= 16 ? `${id} (0x${hex})` : `a ${hex.length * 4}-bit number (0x${hex.slice(0, 16)}…)`;
}

/**
 * chain_mismatch naming both ids: the chain the transaction was signed for and the one this host
 * serves (what eth_chainId on it returns). Built per refusal: a wrong chain is no hot path.
 */
export function chainMismatch(hostChain: bigint, signedFor: bigint): Exit {
  const hex = signedFor.toString(16);
  return reject(
    'chain_mismatch',
    `Transaction chain id does not match the host's chain: signed for chain ${chainIdText(signedFor)}, this host serves chain ${chainIdText(hostChain)}`,
    { chainId: `0x${hostChain.toString(16)}`, ...(hex.length <= 64 ? { txChainId: `0x${hex}` } : {}) },
  );
}
