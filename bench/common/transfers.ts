/**
 * The benches' valid submissions: tipped EIP-1559 transfers to the development tip address, each
 * distinct, signed here (src/dev/sign.ts) by fresh random senders or by anvil's accounts. Light to
 * import (fixtures.ts builds a whole configuration): what a bench that starts txgate needs.
 */
import { randomBytes } from 'node:crypto';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { sign1559 } from '../../src/dev/sign.js';

export interface TransferTerms {
  readonly chainId?: number | undefined;
  /** Wei sent to the tip address: the tip (default 10^12, what the benches' grants ask at least). */
  readonly value?: bigint | undefined;
  readonly maxFeePerGas?: bigint | undefined;
  /** The recipient (default the tip address). */
  readonly to?: string | undefined;
}

/** One tipped transfer by `signer` at `nonce`. */
export function tippedTransfer(signer: string, nonce: number, t: TransferTerms = {}): `0x${string}` {
  return sign1559(
    {
      chainId: t.chainId ?? 4663,
      nonce,
      maxPriorityFeePerGas: 1_000_000_000n,
      maxFeePerGas: t.maxFeePerGas ?? 3_000_000_000n,
      gas: 21000n,
      to: t.to ?? ANVIL_TIP_ADDRESS,
      value: t.value ?? 1_000_000_000_000n,
    },
    signer,
  );
}

/** `n` eth_sendRawTransaction bodies (ids 0…n-1), distinct transfers from `senders` fresh random keys in turn. */
export function submissionBodies(n: number, senders = 16): string[] {
  const keys = Array.from({ length: senders }, () => '0x' + randomBytes(32).toString('hex'));
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_sendRawTransaction', params: [tippedTransfer(keys[i % senders]!, Math.floor(i / senders))] }),
  );
}
