/**
 * The express lane controller's signing key: read from a file only its owner may read, or from an
 * environment variable, and held where nothing prints it. A problem with the key is one line that
 * names where it came from (the file's path, the variable's name), never any of its content.
 */
import { readFileSync, statSync } from 'node:fs';
import { inspect } from 'node:util';
import { keccak256, secp256k1 } from '../base/native.js';

const KEY_HEX = /^(?:0x)?([0-9a-fA-F]{64})$/;
/** The group order n of secp256k1: a key is 1 ≤ k < n. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

export class KeyError extends Error {
  override name = 'KeyError';
}

/** Where the key comes from (the configuration's `keyFile` or `keyEnv`). */
export type KeySource = { readonly file: string } | { readonly env: string };

/**
 * Why a key file may not be used, or null: it must exist, be a regular file, and have no
 * permission for its group or others (0600 or 0400). Reads no content.
 */
export function keyFileProblem(path: string): string | null {
  let mode: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) return `${path} is not a regular file`;
    mode = st.mode & 0o777;
  } catch (e) {
    return `${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  if ((mode & 0o077) !== 0) return `${path} may be read by others (mode ${mode.toString(8).padStart(4, '0')}): only its owner may (chmod 600)`;
  return null;
}

/** A secp256k1 private key and its address; `inspect`, `JSON.stringify` and `String` show only the address. */
export class ControllerKey {
  readonly #secret: Uint8Array;
  /** The controller's address, lower-case 0x. */
  readonly address: string;

  constructor(secret: Uint8Array) {
    const k = BigInt(`0x${Buffer.from(secret).toString('hex')}`);
    if (secret.length !== 32 || k === 0n || k >= N) throw new KeyError('the controller key is not a valid secp256k1 private key');
    this.#secret = Uint8Array.from(secret);
    const pub = secp256k1().publicKeyCreate(this.#secret, false);
    this.address = `0x${Buffer.from(keccak256(pub.subarray(1)))
      .subarray(12)
      .toString('hex')}`;
  }

  /** r ‖ s ‖ v (v = 27 + recovery id, as personal_sign gives it) over a 32-byte hash. */
  sign(hash32: Uint8Array): Uint8Array {
    const { signature, recid } = secp256k1().ecdsaSign(hash32, this.#secret);
    const out = new Uint8Array(65);
    out.set(signature, 0);
    out[64] = 27 + recid;
    return out;
  }

  toJSON(): string {
    return `[controller key ${this.address}]`;
  }
  toString(): string {
    return this.toJSON();
  }
  [inspect.custom](): string {
    return this.toJSON();
  }
}

/** The key from its source, or a KeyError in one line naming the source only. */
export function loadControllerKey(source: KeySource, env: NodeJS.ProcessEnv = process.env): ControllerKey {
  let text: string | undefined;
  let where: string;
  if ('file' in source) {
    where = `key file ${source.file}`;
    const problem = keyFileProblem(source.file);
    if (problem !== null) throw new KeyError(`express lane key file: ${problem}`);
    try {
      text = readFileSync(source.file, 'utf8');
    } catch (e) {
      throw new KeyError(`${where} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  } else {
    where = `environment variable ${source.env}`;
    text = env[source.env];
    if (text === undefined || text === '') throw new KeyError(`${where} is not set`);
  }
  const m = KEY_HEX.exec(text.trim());
  if (m === null) throw new KeyError(`${where} does not hold a private key (64 hex digits, 0x optional)`);
  try {
    return new ControllerKey(Buffer.from(m[1]!, 'hex'));
  } catch {
    throw new KeyError(`${where} does not hold a valid secp256k1 private key`);
  }
}
