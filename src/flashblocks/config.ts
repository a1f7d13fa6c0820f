/**
 * The `chains[].flashblocks` section (off unless a deployment turns it on): the chain builder's
 * flashblocks stream (docs/flashblocks.md), read by the chain's tracker (`preconfirmed`) and its
 * sync send (answered at the preconfirmation). Declared once here; config/config-schema.ts
 * composes it into each chain.
 */
import { bool, custom, int, type Section, type Values } from '../base/config-fields.js';
import type { Reader } from '../base/config-reader.js';

const wsUrlOf = (v: unknown): string | undefined => {
  if (typeof v !== 'string') return undefined;
  try {
    const u = new URL(v);
    return u.protocol === 'ws:' || u.protocol === 'wss:' ? u.href : undefined;
  } catch {
    return undefined;
  }
};

export const FLASHBLOCKS = {
  enabled: bool(
    false,
    "follow the chain builder's flashblocks stream: tracked transactions become `preconfirmed`, sync calls are answered at the preconfirmation ([flashblocks.md](flashblocks.md))",
  ),
  url: custom<string | null>('a ws(s) URL', 'none', 'the flashblocks stream (a WebSocket; text or Brotli frames), required by `enabled`', (r, v, path) => {
    if (v === undefined) return null;
    const u = wsUrlOf(v);
    if (u === undefined) r.problems.push(`${path}: must be a ws:// or wss:// URL`);
    return u ?? null;
  }),
  maxFrameBytes: int(
    1 << 20,
    4096,
    64 << 20,
    'the largest frame read, compressed or not, and the largest a Brotli frame may inflate to; beyond it the frame is counted and not read',
  ),
  stallMs: int(
    2_000,
    200,
    600_000,
    'no slice for this long (connected or not) is a stall: `txgate_flashblocks_stalled`, a `/ready` warning, the connection opened again; outcomes then come from the sealed blocks alone',
  ),
} satisfies Section;

export type FlashblocksConfig = Values<typeof FLASHBLOCKS>;

/** The rules between the section's fields and the chain's (config-schema.ts's checkChain): `read`, whether tracking or the sync send's `receipt` mode is on. */
export function checkFlashblocks(r: Reader, c: FlashblocksConfig, read: boolean, f: string): void {
  if (c.enabled && c.url === null) r.problems.push(`${f}.flashblocks.url: required by flashblocks.enabled (the stream to read)`);
  if (c.enabled && !read)
    r.problems.push(`${f}.flashblocks.enabled: nothing would read the stream: it needs track.enabled, or sync.enabled with sync.mode "receipt"`);
}
