/**
 * Native bindings, loaded explicitly so that a missing binary is a start-up failure and never a
 * silent fall-back to a slow JavaScript implementation:
 * - uWebSockets.js: the package's entry point falls back to a pure-JS server when its binary
 *   does not load; we require the binary for this platform/ABI directly instead.
 * - secp256k1: its index.js falls back to `elliptic` (pure JS, far slower); we require `bindings` only.
 *   Optionally (crypto.secp256k1 = "system") recovery goes through the system's libsecp256k1
 *   instead, via native/secp256k1-system.c; if that binding is missing, start-up fails.
 * - keccak-256: a WebAssembly function of our own (keccak.ts: one instance, its memory reused;
 *   no JS fall-back exists).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as Uws from 'uWebSockets.js';
import { Keccak256 } from './keccak.js';

const require = createRequire(import.meta.url);

export class NativeLoadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NativeLoadError';
  }
}

export type UwsModule = typeof Uws;

let uwsModule: UwsModule | undefined;

/**
 * Which library recovers signatures on the hot path: `npm` (the prebuilt binding inside the
 * `secp256k1` package, the default: `npm ci` installs it) or `system` (the system's
 * libsecp256k1 0.2+, built by `npm run build:secp256k1`; see below).
 */
export type Secp256k1Binding = 'npm' | 'system';
export const SECP256K1_BINDINGS: readonly Secp256k1Binding[] = ['npm', 'system'];

/** The native uWebSockets.js binding for this platform and Node ABI, or a NativeLoadError. */
export function uws(): UwsModule {
  if (uwsModule !== undefined) return uwsModule;
  const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  try {
    uwsModule = require(`uWebSockets.js/binaries/${file}`) as UwsModule;
  } catch (e) {
    throw new NativeLoadError(
      `the native uWebSockets.js binding ${file} did not load (${(e as Error).message}); ` +
        'txgate refuses to run on the slow JavaScript fall-back. Use Node 20 on x64/arm64 Linux (glibc), macOS or Windows and reinstall with npm ci.',
      { cause: e },
    );
  }
  return uwsModule;
}

/** The raw N-API addon inside `secp256k1`: no argument checks, caller-provided output. */
export interface Secp256k1Addon {
  /** Returns 0 on success, 1 on a signature parse error, 2 when recovery fails. */
  ecdsaRecover(output: Uint8Array, sig: Uint8Array, recid: number, msg32: Uint8Array): number;
}

/** The npm package's addon also parses public keys. */
interface NpmSecp256k1Addon extends Secp256k1Addon {
  /** 0 when the serialized key (33 or 65 bytes) is a point on the curve, else non-zero. */
  publicKeyVerify(key: Uint8Array): number;
}

export interface Secp256k1 {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean, output?: Uint8Array): Uint8Array;
  ecdsaSign(msg32: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
  publicKeyCreate(privateKey: Uint8Array, compressed?: boolean): Uint8Array;
}

let secpModule: Secp256k1 | undefined;
let secpAddon: Secp256k1Addon | undefined;

/** Where `npm run build:secp256k1` puts the system binding. */
export const SYSTEM_SECP256K1_PATH = fileURLToPath(new URL('../../../build/secp256k1-system.node', import.meta.url));

/** The binding the hot path calls now (logs and build info take it from the configuration). */
export function secp256k1Binding(): Secp256k1Binding {
  return secpAddon !== undefined && secpAddon === systemAddon ? 'system' : 'npm';
}

let npmAddon: NpmSecp256k1Addon | undefined;
let systemAddon: Secp256k1Addon | undefined;

/** The npm package's raw addon: no argument checks, caller-provided output. */
export function npmSecp256k1Addon(): NpmSecp256k1Addon {
  if (npmAddon !== undefined) return npmAddon;
  secp256k1(); // fail fast with the clear message if the binding is missing
  const dir = require.resolve('secp256k1/package.json').replace(/package\.json$/, '');
  const addon = (require('node-gyp-build') as (d: string) => { Secp256k1: new () => NpmSecp256k1Addon })(dir);
  return (npmAddon = new addon.Secp256k1());
}

/** The system libsecp256k1 binding, or a NativeLoadError saying how to build it. */
export function systemSecp256k1Addon(): Secp256k1Addon {
  if (systemAddon !== undefined) return systemAddon;
  try {
    return (systemAddon = require(SYSTEM_SECP256K1_PATH) as Secp256k1Addon);
  } catch (e) {
    throw new NativeLoadError(
      `crypto.secp256k1 is "system" but ${SYSTEM_SECP256K1_PATH} did not load (${(e as Error).message.split('\n')[0]}); ` +
        'build it with `npm run build:secp256k1` (Debian: apt-get install -y libsecp256k1-dev first)',
      { cause: e },
    );
  }
}

/** The addon the hot path calls (the checked wrapper costs an allocation and asserts). */
export function secp256k1Addon(): Secp256k1Addon {
  return (secpAddon ??= npmSecp256k1Addon());
}

/**
 * Whether `compressed` (0x02 or 0x03, then a 32-byte x) is a point on secp256k1: a square root
 * modulo p, a fraction of a recovery's cost (docs/performance.md). The `curve` signature check
 * (tx/decoder.ts).
 */
export function isCurvePoint(compressed: Uint8Array): boolean {
  return npmSecp256k1Addon().publicKeyVerify(compressed) === 0;
}

/** The libsecp256k1 N-API binding shipped (prebuilt) in the `secp256k1` package. */
export function secp256k1(): Secp256k1 {
  if (secpModule !== undefined) return secpModule;
  try {
    secpModule = require('secp256k1/bindings') as Secp256k1;
  } catch (e) {
    throw new NativeLoadError(
      `the native secp256k1 binding did not load (${(e as Error).message}); txgate refuses to fall back to the JavaScript implementation`,
      { cause: e },
    );
  }
  return secpModule;
}

const hasher = new Keccak256();

/** Must be awaited once at start-up: the recovery binding chosen (keccak needs nothing: its module is built synchronously). */
export async function initCrypto(binding: Secp256k1Binding = 'npm'): Promise<void> {
  useSecp256k1(binding);
}

/** Switches the hot path's recovery binding (start-up; tests and the bench compare both). */
export function useSecp256k1(binding: Secp256k1Binding): void {
  secpAddon = binding === 'system' ? systemSecp256k1Addon() : npmSecp256k1Addon();
}

/** keccak-256 of the concatenation of parts, without concatenating them. */
export function keccak256Parts(a: Uint8Array, b: Uint8Array, c: Uint8Array): Uint8Array {
  return hasher.digestParts(a, b, c);
}

/** keccak-256 as a transaction hash is written: 0x and 64 lower-case hex digits. */
export function keccak256Hex(data: Uint8Array): string {
  return hasher.hex(data);
}

/** keccak-256 (synchronous; one reused WebAssembly instance). */
export function keccak256(data: Uint8Array): Uint8Array {
  return hasher.digest(data);
}
