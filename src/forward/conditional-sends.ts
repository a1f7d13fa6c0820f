/**
 * The conditional sends of the chains that turn them on (`chains[].conditional.enabled`), and
 * the heads their conditions stage reads: the chain's one head source (the composition root's,
 * upstreams/chain-rpc/chain-heads.ts), kept fresh for it (the `rpcWs` subscription, else the
 * chain RPC's latest block every `headPollMs`), built by the composition root beside the
 * forwarders. A chain without it gets nothing of it, and its head source (if any) polls nothing.
 */
import type { ChainLink } from './chain-link.js';
import type { ChainForwarder } from './forwarder.js';
import type { HeadView } from '../conditional/head.js';
import type { ChainHeads } from '../upstreams/chain-rpc/chain-heads.js';
import { ConditionalSend } from './conditional-send.js';

export interface ConditionalSends {
  readonly senders: ReadonlyMap<number, ConditionalSend>;
  readonly heads: ReadonlyMap<number, HeadView>;
  close(): void;
}

export function conditionalSends(
  links: readonly ChainLink[],
  /** The chains' plain sends, whose sequencers and route (the express lane's rule, the strategy) a conditional send takes. */
  forwarders: ReadonlyMap<number, ChainForwarder>,
  /** The chains' head sources, by chain id. */
  chainHeads: ReadonlyMap<number, ChainHeads>,
): ConditionalSends {
  const senders = new Map<number, ConditionalSend>();
  const heads = new Map<number, HeadView>();
  const releases: (() => void)[] = [];
  for (const link of links) {
    const c = link.chain;
    if (!c.conditional.enabled) continue;
    senders.set(c.chainId, new ConditionalSend(link, forwarders.get(c.chainId)!));
    const source = chainHeads.get(c.chainId);
    if (source === undefined) continue;
    releases.push(source.keepLatest(c.conditional.headPollMs));
    heads.set(c.chainId, source);
  }
  return {
    senders,
    heads,
    close: () => {
      for (const release of releases) release();
    },
  };
}
