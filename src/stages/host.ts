/**
 * Stage 0, host: the Host header (port stripped, case-insensitive, one trailing dot ignored)
 * must be one of a chain's hostnames (DESIGN §2), else 421 before the body is read.
 */
import { REJECT } from '../errors.js';
import { enrich, type BaseCtx, type ChainRuntime, type HostCtx } from '../pipeline/context.js';
import type { Stage } from '../pipeline/pipeline.js';

/** `Example.COM:8080` → `example.com`; `[::1]:8080` → `[::1]`. */
export function hostName(raw: string): string {
  let end = raw.length;
  if (raw.charCodeAt(0) === 91 /* [ */) {
    const close = raw.indexOf(']');
    end = close < 0 ? raw.length : close + 1;
  } else {
    const colon = raw.indexOf(':');
    if (colon >= 0) end = colon;
  }
  if (end > 0 && raw.charCodeAt(end - 1) === 46 /* . */) end--;
  return (end === raw.length ? raw : raw.slice(0, end)).toLowerCase();
}

export class HostTable {
  private readonly byHost = new Map<string, ChainRuntime>();
  readonly byChainId = new Map<number, ChainRuntime>();

  constructor(chains: readonly ChainRuntime[]) {
    for (const c of chains) {
      this.byChainId.set(c.chainId, c);
      for (const h of c.config.hosts) this.byHost.set(h, c);
    }
  }

  /** The chain bound to a raw Host header, or undefined. */
  lookup(rawHost: string): ChainRuntime | undefined {
    return this.byHost.get(hostName(rawHost));
  }
}

export function createHostStage(hosts: HostTable): Stage<BaseCtx, HostCtx> {
  return {
    name: 'host',
    run(ctx) {
      const chain = hosts.lookup(ctx.head.host);
      return chain === undefined ? REJECT.misdirected_host : enrich(ctx, 'chain', chain);
    },
  };
}
