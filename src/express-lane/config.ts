/**
 * The `chains[].expressLane` section (off unless a deployment turns it on): the auction contract,
 * the endpoint serving timeboost_sendExpressLaneTransaction, where the controller's key is, and
 * how the edge uses the lane. Declared once here; src/config/config.ts composes it into each chain.
 */
import { isAbsolute, resolve } from 'node:path';
import { bool, custom, int, oneOf, type Section, type Values } from '../base/config-fields.js';
import type { Reader } from '../base/config-reader.js';
import { keyFileProblem } from './key.js';

export type SequenceMode = 'dont-care' | 'ordered';
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

const optional = <T>(allowed: string, doc: string, read: (v: unknown) => T | undefined, problem: string, ctxRead?: (v: T, baseDir: string) => T) =>
  custom<T | null>(allowed, 'none', doc, (r, v, path, ctx) => {
    if (v === undefined) return null;
    const out = read(v);
    if (out === undefined) {
      r.problems.push(`${path}: ${problem}`);
      return null;
    }
    return ctxRead === undefined ? out : ctxRead(out, ctx.baseDir);
  });

const httpUrlOf = (v: unknown): string | undefined => {
  if (typeof v !== 'string') return undefined;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:' ? v : undefined;
  } catch {
    return undefined;
  }
};

export const EXPRESS_LANE = {
  enabled: bool(
    false,
    'wrap granted submissions into Timeboost express lane submissions while the controller below holds the round ([express-lane.md](express-lane.md))',
  ),
  auction: optional<string>(
    'a 0x address',
    'the ExpressLaneAuction contract (its proxy); start reads its `roundTimingInfo()` from `chains[].rpc` and refuses a chain whose contract does not answer',
    (v) => (typeof v === 'string' && ADDRESS.test(v) ? v.toLowerCase() : undefined),
    'must be a 0x address (40 hex digits)',
  ),
  endpoint: optional<string>(
    'an http(s) URL',
    'the endpoint serving `timeboost_sendExpressLaneTransaction` (usually the sequencer)',
    httpUrlOf,
    'must be an http:// or https:// URL',
  ),
  keyFile: optional<string>(
    'a file path',
    "the controller's private key (64 hex digits), in a file only its owner may read (start refuses another mode); relative to the config file",
    (v) => (typeof v === 'string' && v !== '' ? v : undefined),
    'must be a non-empty path',
    (p, baseDir) => (isAbsolute(p) ? p : resolve(baseDir, p)),
  ),
  keyEnv: optional<string>(
    'an environment variable name',
    "the environment variable holding the controller's private key (instead of `keyFile`)",
    (v) => (typeof v === 'string' && ENV_NAME.test(v) ? v : undefined),
    'must be an environment variable name',
  ),
  marginMs: int(1000, 0, 60_000, 'no wrapping within this long of the round’s end (the round may change in flight): the plain path'),
  sequence: oneOf<SequenceMode>(
    ['dont-care', 'ordered'],
    'dont-care',
    "`dont-care`: Nitro's 2^64−1, shared by any number of edges with no coordination; `ordered`: gapless numbers per round (one edge alone uses the controller)",
  ),
  maxFutureDistance: int(1000, 1, 1_000_000, "`ordered`: the sequencer's `max-future-sequence-distance`; a number beyond it takes the plain path"),
  backoffMs: int(
    1000,
    0,
    600_000,
    'after the endpoint refuses a round as not ours (not the controller, no controller, another round): the plain path for this long, or until the contract names a controller again',
  ),
  pollMs: int(250, 50, 60_000, 'how often the auction contract is read (new blocks, its logs)'),
  staleMs: int(3000, 100, 600_000, 'with no successful read for this long, the round is not taken as ours: the plain path'),
  timeoutMs: int(1000, 10, 60_000, "each read of the chain RPC for the auction's state"),
} satisfies Section;

export type ExpressLaneConfig = Values<typeof EXPRESS_LANE>;

/** The rules between the section's fields (and the chain's `rpc`), checked where it is enabled. */
export function checkExpressLane(r: Reader, c: ExpressLaneConfig, hasRpc: boolean, f: string): void {
  if (!c.enabled) return;
  const p = `${f}.expressLane`;
  if (c.auction === null) r.problems.push(`${p}.auction: required when expressLane.enabled`);
  if (c.endpoint === null) r.problems.push(`${p}.endpoint: required when expressLane.enabled`);
  if (!hasRpc) r.problems.push(`${f}.rpc: required by expressLane (the chain RPC the auction contract is read from)`);
  if ((c.keyFile === null) === (c.keyEnv === null)) r.problems.push(`${p}: exactly one of keyFile and keyEnv is required when enabled`);
  if (c.keyFile !== null) {
    const problem = keyFileProblem(c.keyFile);
    if (problem !== null) r.problems.push(`${p}.keyFile: ${problem}`);
  }
}
