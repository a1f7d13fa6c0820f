/**
 * A thread's sends composed (the composition root's, app.ts): every chain's link, its one head
 * source and flashblocks stream, its plain send (the forwarder, with duplicate suppression), and
 * on the chains that turn them on its sync send and conditional send beside it; tracking
 * attached to them.
 */
import type { Config } from './config/config.js';
import { ChainDuplicates, Duplicates } from './forward/dedup.js';
import { ChainLink } from './forward/chain-link.js';
import { ChainForwarder, type ForwardObserver } from './forward/forwarder.js';
import { ConditionalSend } from './forward/conditional-send.js';
import type { ExpressLanesRef } from './forward/express-send.js';
import type { ForwardRequest } from './forward/parts.js';
import type { HeadView } from './conditional/head.js';
import type { Logger } from './log/log.js';
import { SyncSender, type SyncObserver } from './sync/sync-send.js';
import { type FlashblocksSeamPart, flashblocksOf } from './threads/flashblocks-seam.js';
import type { ThreadParts } from './threads/thread-parts.js';
import type { Tracking } from './track/tracking.js';
import { ChainHeads } from './upstreams/chain-rpc/chain-heads.js';

/**
 * The sends of every chain: the plain one (the forwarder, with duplicate suppression) and, on the
 * chains that turn it on, the sync one beside it (its own connections; the chain's link: its
 * outcome rules and chain RPC client; the forwarder's plain send).
 */
export function buildSends(
  config: Config,
  log: Logger,
  thread: ThreadParts,
  observer: (ForwardObserver & SyncObserver) | undefined,
  tracking: Tracking,
  lanes: ExpressLanesRef,
  flashblocksSeam: FlashblocksSeamPart | null,
) {
  const duplicates = new Duplicates(new Map(config.chains.map((c) => [c.chainId, new ChainDuplicates(config.dedup, thread.txTable)])));
  // A tracked chain's forwards tell its tracker which sequencer accepted by which rule (track/tracking.ts).
  const links = ChainLink.forChains(config.chains, thread.board, log, (c) => tracking.observerOf(c, observer));
  // Beside each link, the chain's one head source, where it has `rpcWs` or a reader of its latest head (the
  // conditions check, with `rpc`): its subscription opens on the first subscriber or reader, its poll only for a reader.
  const heads = new Map(
    links.flatMap((l) => {
      const c = l.chain;
      return c.rpcWs === null && !(c.conditional.enabled && l.rpc !== null) ? [] : [[c.chainId, new ChainHeads(c.rpcWs, log, l.rpc)] as const];
    }),
  );
  // A chain's flashblocks stream (`chains[].flashblocks`): one per process, read on this thread (opened by its first
  // subscriber: the tracker, the sync send) or followed from the thread that reads it (threads/flashblocks-seam.ts).
  const fb = flashblocksOf(config, log, flashblocksSeam);
  const flashblocks = fb.feeds;
  const forwarders = new Map(
    links.map((link) => [link.chainId, new ChainForwarder(link, duplicates.forChain(link.chainId), tracking.observerOf(link.chain, observer), lanes)]),
  );
  const syncSenders = new Map(
    links.flatMap((link) => {
      if (!link.chain.sync.enabled) return [];
      const forwarder = forwarders.get(link.chainId)!;
      const parts = {
        plainSend: (r: ForwardRequest) => forwarder.forward(r),
        laneTakes: (r: ForwardRequest) => forwarder.laneTakes(r),
        duplicates: duplicates.forChain(link.chainId),
        observer,
        heads: heads.get(link.chainId) ?? null,
        flashblocks: flashblocks.get(link.chainId) ?? null,
      };
      return [[link.chainId, new SyncSender(link, parts)] as const];
    }),
  );
  tracking.attach(new Map(links.flatMap((l) => (l.rpc === null ? [] : [[l.chainId, l.rpc] as const]))), heads, duplicates, flashblocks);
  // Handed to the other threads after this thread's readers took each slice (the tracker's status is then never behind a sync answer).
  const stopSeam = fb.start();
  const conditional = conditionalSends(links, forwarders, heads);
  // Bytes already in flight cost no rate-limit token, a plain send's or a waiting sync call's: one table (dedup.ts).
  return {
    links,
    heads,
    flashblocks,
    streams: fb.streams,
    stopSeam,
    forwarders,
    syncSenders,
    conditional,
    tracking,
    trackers: tracking.trackers,
    inFlight: duplicates,
  };
}

export interface ConditionalSends {
  readonly senders: ReadonlyMap<number, ConditionalSend>;
  /** The heads the conditions stage reads, by chain id. */
  readonly heads: ReadonlyMap<number, HeadView>;
  close(): void;
}

/**
 * The conditional sends of the chains that turn them on (`chains[].conditional.enabled`), and
 * the heads their conditions stage reads: the chain's one head source (the composition root's,
 * upstreams/chain-rpc/chain-heads.ts), kept fresh for it (the `rpcWs` subscription, else the
 * chain RPC's latest block every `headPollMs`). A chain without it gets nothing of it, and its
 * head source (if any) polls nothing.
 */
function conditionalSends(
  links: readonly ChainLink[],
  forwarders: ReadonlyMap<number, ChainForwarder>,
  chainHeads: ReadonlyMap<number, ChainHeads>,
): ConditionalSends {
  const senders = new Map<number, ConditionalSend>();
  const heads = new Map<number, HeadView>();
  const interest = new AbortController();
  for (const link of links) {
    const c = link.chain;
    if (!c.conditional.enabled) continue;
    senders.set(c.chainId, new ConditionalSend(link, forwarders.get(c.chainId)!));
    const source = chainHeads.get(c.chainId);
    if (source === undefined) continue;
    source.keepLatest(c.conditional.headPollMs, interest.signal);
    heads.set(c.chainId, source);
  }
  return {
    senders,
    heads,
    close: () => interest.abort(),
  };
}
