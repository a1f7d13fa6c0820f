/**
 * One flashblocks stream per chain and process (docs/flashblocks.md#how-the-stream-is-read): with
 * several worker threads, worker 0 reads each chain's stream and hands every slice it reads to
 * each other worker over a MessagePort of its own, in order; there a followed feed
 * (flashblocks/feed.ts) tells that thread's readers (its sync send) as the stream would. A slice
 * crosses as what was read of it (its block, index, transactions' hashes, places and receipts):
 * the other threads neither inflate, parse nor hash it. Worker 0 opens the stream where any
 * thread reads it (the chain tracks, or its sync send waits for receipts), even if it reads
 * nothing of it itself.
 */
import type { MessagePort } from 'node:worker_threads';
import type { ChainConfig, Config } from '../config/config.js';
import { FollowedFeed, type SliceFeed, type SliceRead } from '../flashblocks/feed.js';
import { FlashblocksStream } from '../flashblocks/stream.js';
import type { Logger } from '../log/log.js';

/** A worker's part: worker 0 a port to every other worker; each other worker its port from worker 0. */
export type FlashblocksSeamPart = { readonly role: 'lead'; readonly ports: readonly MessagePort[] } | { readonly role: 'follow'; readonly port: MessagePort };

interface Handed {
  readonly chainId: number;
  readonly slice: SliceRead;
}

/** The parts of a process of `workers` threads (none with one). */
export function flashblocksSeamParts(workers: number, channel: () => { port1: MessagePort; port2: MessagePort }): FlashblocksSeamPart[] {
  if (workers < 2) return [];
  const pairs = Array.from({ length: workers - 1 }, channel);
  return [{ role: 'lead', ports: pairs.map((p) => p.port1) }, ...pairs.map((p): FlashblocksSeamPart => ({ role: 'follow', port: p.port2 }))];
}

/** Whether any thread reads a chain's stream: its tracker, or its sync send waiting for receipts. */
export const streamRead = (c: ChainConfig): boolean => c.flashblocks.enabled && (c.track.enabled || (c.sync.enabled && c.sync.mode === 'receipt'));

/** Worker 0: every slice of every chain's stream posted to every other worker; returns the stop. */
export function leadFlashblocks(streams: ReadonlyMap<number, FlashblocksStream>, chains: readonly ChainConfig[], ports: readonly MessagePort[]): () => void {
  const offs: (() => void)[] = [];
  for (const c of chains) {
    const stream = streams.get(c.chainId);
    if (stream === undefined || !streamRead(c)) continue;
    offs.push(
      stream.subscribe((slice) => {
        for (const p of ports) p.postMessage({ chainId: c.chainId, slice } satisfies Handed);
      }),
    );
  }
  for (const p of ports) p.unref();
  return () => {
    for (const off of offs) off();
    for (const p of ports) p.close();
  };
}

/** Another worker: the slices worker 0 hands over, told by this thread's feeds; returns the stop. */
export function followFlashblocks(feeds: ReadonlyMap<number, FollowedFeed>, port: MessagePort, log: Logger): () => void {
  port.on('message', (m: Handed) => {
    try {
      feeds.get(m.chainId)?.take(m.slice);
    } catch (err) {
      log.error({ err }, 'flashblocks: a slice handed over could not be taken');
    }
  });
  port.unref();
  return () => port.close();
}

/**
 * The chains' flashblocks feeds on this thread: the streams it reads (`start` hands their slices
 * to the other threads where it leads), or the slices it follows (`start` takes them).
 */
export function flashblocksOf(config: Config, log: Logger, seam: FlashblocksSeamPart | null) {
  const chains = config.chains.filter((c) => c.flashblocks.enabled);
  if (seam?.role === 'follow') {
    const feeds = new Map(chains.map((c) => [c.chainId, new FollowedFeed(c.chainId, log)] as const));
    return {
      feeds: feeds as ReadonlyMap<number, SliceFeed>,
      streams: new Map<number, FlashblocksStream>(),
      start: () => followFlashblocks(feeds, seam.port, log),
    };
  }
  const streams = new Map(chains.map((c) => [c.chainId, new FlashblocksStream(c.chainId, c.flashblocks, log)] as const));
  const start = () => (seam?.role === 'lead' ? leadFlashblocks(streams, chains, seam.ports) : () => undefined);
  return { feeds: streams as ReadonlyMap<number, SliceFeed>, streams, start };
}

/** /ready's detail for a flashblocks stream stalled or down (a warning: outcomes then come from the sealed blocks). */
export function flashblocksProblems(streams: ReadonlyMap<number, FlashblocksStream>): string | null {
  const problems = [...streams].flatMap(([chainId, s]) => (s.problem === null ? [] : [`chain ${chainId}: ${s.problem}`]));
  return problems.length === 0 ? null : problems.join('; ');
}
