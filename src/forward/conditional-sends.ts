/**
 * The conditional sends of the chains that turn them on (`chains[].conditional.enabled`), and
 * the heads their conditions stage reads (a chain with `rpc`: its latest block, polled), built
 * by the composition root beside the forwarders. A chain without it gets nothing of it.
 */
import type { ChainLink } from './chain-link.js';
import { ExpressSend, type ExpressLanesRef } from './express-send.js';
import type { ChainForwarder } from './forwarder.js';
import type { AttemptObserver } from './parts.js';
import { HeadPoll, type HeadView } from '../conditional/head.js';
import { ConditionalSend } from './conditional-send.js';

export interface ConditionalSends {
  readonly senders: ReadonlyMap<number, ConditionalSend>;
  readonly heads: ReadonlyMap<number, HeadView>;
  close(): void;
}

export function conditionalSends(
  links: readonly ChainLink[],
  forwarders: ReadonlyMap<number, ChainForwarder>,
  lanes: ExpressLanesRef,
  observerOf: (c: ChainLink['chain']) => AttemptObserver | undefined,
): ConditionalSends {
  const senders = new Map<number, ConditionalSend>();
  const heads = new Map<number, HeadPoll>();
  for (const link of links) {
    const c = link.chain;
    if (!c.conditional.enabled) continue;
    const times = { timeoutMs: c.forward.timeoutMs, queueMs: c.forward.queueMs };
    const express = link.lane === null ? null : new ExpressSend(c.chainId, lanes, link.lane, link.attempts, times, link.log, observerOf(c));
    senders.set(c.chainId, new ConditionalSend(link, forwarders.get(c.chainId)!.sequencers, express));
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
