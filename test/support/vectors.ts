/** The 168 transactions of the Ethereum test suite (test/fixtures), and the check every decoder must pass on them. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Exit } from '../../src/base/errors.js';
import type { TxDecoder } from '../../src/tx/decoder.js';

export interface Vector {
  source: string;
  txbytes: string;
  fork: string;
  valid: boolean;
  hash: string | null;
  sender: string | null;
}

export const VECTORS: Vector[] = JSON.parse(readFileSync(join(import.meta.dirname, '../../../test/fixtures/ethereum-tests-transactions.json'), 'utf8'));

const ALL_TYPES = { txTypes: new Set([0, 1, 2, 4]), allowUnprotected: true };

/**
 * Decodes every vector with the decoder `make(fork)` builds (one per fork) and lists each one
 * whose validity, hash or sender differs from the suite's; the decoders built, by fork.
 */
export function vectorMismatches(make: (fork: string) => TxDecoder): { mismatches: string[]; decoders: Map<string, TxDecoder> } {
  const decoders = new Map<string, TxDecoder>();
  const mismatches: string[] = [];
  for (const v of VECTORS) {
    const fork = v.fork.toLowerCase();
    let d = decoders.get(fork);
    if (d === undefined) decoders.set(fork, (d = make(fork)));
    const out = d.decode(Buffer.from(v.txbytes.slice(2), 'hex'), ALL_TYPES);
    const ok = !(out instanceof Exit);
    if (ok !== v.valid) mismatches.push(`${v.source}: expected ${v.valid ? 'valid' : 'invalid'}, got ${ok ? 'valid' : (out as Exit).reason}`);
    else if (ok && (out.hash !== v.hash || out.sender() !== v.sender!.toLowerCase())) mismatches.push(`${v.source}: hash/sender differ`);
  }
  return { mismatches, decoders };
}
