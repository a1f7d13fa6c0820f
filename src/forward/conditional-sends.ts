/**
 * The conditional sends of the chains that turn them on (`chains[].conditional.enabled`), and
 * the heads their conditions stage reads (a chain with `rpc`: its latest block, polled), built
 * by the composition root beside the forwarders. A chain without it gets nothing of it.
 */
import type { ChainLink } from './chain-link.js';
import type { ChainForwarder } from './forwarder.js';
import { HeadPoll, type HeadView } from '../conditional/head.js';
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
): ConditionalSends {
  const senders = new Map<number, ConditionalSend>();
  const heads = new Map<number, HeadPoll>();
  for (const link of links) {
    const c = link.chain;
    if (!c.conditional.enabled) continue;
    senders.set(c.chainId, new ConditionalSend(link, forwarders.get(c.chainId)!));
    if (link.rpc !== null) heads.set(c.chainId, new HeadPoll(link.rpc, c.conditional.headPollMs, link.log));
  }
  return {
    senders,
    heads,
    close: () => {
      for (const h of heads.values()) h.close();
    },
  };
}
