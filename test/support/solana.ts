/** Hand-built Solana wire transactions (legacy and v0 messages): a system transfer. */
import { randomBytes } from 'node:crypto';

export function solanaTransfer(versioned: boolean): Buffer {
  const parts: Buffer[] = [];
  parts.push(Buffer.from([1]), randomBytes(64)); // 1 signature
  if (versioned) parts.push(Buffer.from([0x80]));
  parts.push(Buffer.from([1, 0, 1])); // header: 1 required, 0 ro-signed, 1 ro-unsigned
  parts.push(Buffer.from([3]), randomBytes(32), randomBytes(32), Buffer.alloc(32)); // keys: from, to, system program
  parts.push(randomBytes(32)); // recent blockhash
  const data = Buffer.alloc(12);
  data.writeUInt32LE(2, 0);
  data.writeBigUInt64LE(1_000_000n, 4);
  parts.push(Buffer.from([1, 2, 2, 0, 1, 12]), data); // 1 instruction: program 2, accounts [0,1], 12 bytes
  if (versioned) parts.push(Buffer.from([0])); // no address-table lookups
  return Buffer.concat(parts);
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
export function base58(b: Buffer): string {
  let n = BigInt('0x' + (b.toString('hex') || '0'));
  let s = '';
  while (n > 0n) {
    s = B58[Number(n % 58n)] + s;
    n /= 58n;
  }
  for (const byte of b) {
    if (byte !== 0) break;
    s = '1' + s;
  }
  return s;
}
