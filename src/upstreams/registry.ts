/**
 * The kinds of upstream, by URL scheme: the one list a new kind joins (its folder beside this
 * file exports its `UpstreamKind`). The configuration accepts a sequencer URL of any scheme
 * listed here, and every sequencer client (the plain send's, the sync send's, the prober's) is
 * opened through `openUpstream`.
 */
import { httpKind } from './http/http-upstream.js';
import type { OpenOptions, Upstream, UpstreamKind } from './upstream.js';
import { wsKind } from './ws/ws-upstream.js';

const KINDS: readonly UpstreamKind[] = [httpKind, wsKind];

const BY_SCHEME = new Map(KINDS.flatMap((k) => k.schemes.map((s) => [s, k] as const)));

/** Every scheme served, as `URL.protocol` gives them ('http:', …). */
export const UPSTREAM_SCHEMES: readonly string[] = [...BY_SCHEME.keys()];

/** The schemes as an operator writes them: "http://, https://, ws:// or wss://". */
export function schemesText(): string {
  const s = UPSTREAM_SCHEMES.map((p) => `${p}//`);
  return s.length === 1 ? s[0]! : `${s.slice(0, -1).join(', ')} or ${s.at(-1)}`;
}

/** The normalised URL when `v` is a URL of a scheme served here, else undefined. */
export function upstreamUrl(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  try {
    const u = new URL(v);
    return BY_SCHEME.has(u.protocol) ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** The upstream for a URL the configuration accepted (upstreamUrl), opened by its kind. */
export function openUpstream(url: string, options: OpenOptions): Upstream {
  const kind = BY_SCHEME.get(new URL(url).protocol);
  if (kind === undefined) throw new Error(`${url.slice(0, url.indexOf(':') + 1)} is no kind of upstream (${schemesText()})`);
  return kind.open(url, options);
}
