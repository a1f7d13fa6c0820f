/**
 * The chains a deployment serves: per-chain state built once at start-up, and the table that
 * picks a chain by the Host header (docs/design.md §2.2). Used by the host stage and GET /tip-addresses.
 */
import type { ChainConfig, Config } from './config.js';
import { type Exit, result } from '../base/errors.js';

/** Per-chain state built at start-up. */
export interface ChainRuntime {
  readonly chainId: number;
  /** `0x1237` for 4663: the eth_chainId answer. */
  readonly chainIdHex: string;
  /** The prebuilt eth_chainId answer. */
  readonly chainIdAnswer: Exit;
  readonly config: ChainConfig;
}

export function buildChains(config: Config): ChainRuntime[] {
  return config.chains.map((c) => {
    const chainIdHex = '0x' + c.chainId.toString(16);
    return { chainId: c.chainId, chainIdHex, chainIdAnswer: result(chainIdHex), config: c };
  });
}

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

  constructor(chains: readonly ChainRuntime[]) {
    for (const c of chains) for (const h of c.config.hosts) this.byHost.set(h, c);
  }

  /** The chain bound to a raw Host header, or undefined. */
  lookup(rawHost: string): ChainRuntime | undefined {
    // The last Host seen, compared as it came: clients keep sending the same one, and a string
    // compare is cheaper than lower-casing and hashing it again (the table never changes).
    if (rawHost === this.lastRaw) return this.lastChain;
    const chain = this.byHost.get(hostName(rawHost));
    this.lastRaw = rawHost;
    this.lastChain = chain;
    return chain;
  }

  private lastRaw: string | null = null;
  private lastChain: ChainRuntime | undefined = undefined;
}
