/**
 * What bench:track's two drivers (track-accept.ts: instructions, track-alloc.ts: bytes) share:
 * one tracked chain and its tracker; in mode `hand` the seam of src/track/seam/ with
 * both ends on this thread (the record written into the ring, the owner's wake-up and reading,
 * its entry; not another thread's scheduling); acceptances' requests as a request has them (hash and
 * raw bytes); and acceptances handed over 8 to a turn of the event loop, as 8 connections would.
 */
import { randomBytes } from 'node:crypto';
import { MessageChannel } from 'node:worker_threads';
import { parseConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/log.js';
import { TrackOwner } from '../../src/track/seam/owner.js';
import { seamParts } from '../../src/track/seam/protocol.js';
import { RemoteTracker, TrackRemote } from '../../src/track/seam/remote.js';
import { type HandOff, Tracker } from '../../src/track/tracker.js';
import { ChainRpc } from '../../src/upstreams/chain-rpc/chain-rpc.js';

/** Handed to the tracker (the owner's thread), over the seam (another worker's), or neither. */
export type TrackMode = 'track' | 'hand' | 'none';

const RPC = 'http://127.0.0.1:9';
const turn = () => new Promise<void>((r) => setImmediate(r));

export function trackRig(mode: TrackMode, maxTracked?: number) {
  const chain = parseConfig(
    {
      chains: [
        {
          chainId: 4663,
          hosts: ['x'],
          sequencers: [RPC],
          rpc: RPC,
          track: { enabled: true, pollMs: 60_000, stallMs: 600_000, ...(maxTracked !== undefined ? { maxTracked } : {}) },
        },
      ],
    },
    '.',
    {},
  ).chains[0]!;
  const log = createLogger({ level: 'error' });
  const [own, other] = seamParts(2, () => new MessageChannel());
  if (own?.role !== 'owner' || other?.role !== 'remote') throw new Error('two threads make an owner and a remote');
  // In mode `hand` the owner makes the tracker, given the owner as its hand-off (src/track/seam/owner.ts).
  const make = (handOff: HandOff | null) => new Tracker(chain, log, { rpc: new ChainRpc(RPC), handOff });
  const owner = mode === 'hand' ? new TrackOwner({ ports: own.ports, rings: own.rings, log, trackers: (h) => new Map([[chain.chainId, make(h)]]) }) : null;
  const tracker = owner?.trackers.get(chain.chainId) ?? make(null);
  const remote = mode === 'hand' ? new RemoteTracker(chain.chainId, new ChainRpc(RPC), new TrackRemote(other.port, other.ring, log)) : null;
  const tracked = () => tracker.pending + tracker.final;
  // As a request has them: the hash and the hex flat strings (a JSON body's, not joined ones).
  const flat = (s: string): string => JSON.parse(JSON.stringify(s)) as string;
  const requests = (n: number) =>
    Array.from({ length: n }, () => ({
      hash: flat('0x' + randomBytes(32).toString('hex')),
      rawHex: flat('0x' + randomBytes(115).toString('hex')),
      account: 'desk',
      reqId: 'r',
      sender: null,
      t0: performance.now(),
    }));
  return {
    turn,
    requests,
    /** Every request accepted, 8 to a turn, then the owner's reading of the last records (checked). */
    async accept(reqs: ReturnType<typeof requests>): Promise<void> {
      const want = tracked() + (mode === 'none' ? 0 : reqs.length);
      for (let i = 0; i < reqs.length; i += 8) {
        for (let j = i; j < i + 8 && j < reqs.length; j++) {
          if (mode === 'track') tracker.accepted(reqs[j]!, RPC, 'hash');
          else if (remote !== null) remote.accepted(reqs[j]!, RPC, 'hash');
        }
        await turn();
      }
      // The owner reads what it was not woken for (no lane subscription: as its next pass or status question would).
      owner?.catchUp();
      for (let waited = 0; tracked() < want && waited < 10_000; waited++) await turn();
      if (tracked() !== want) throw new Error(`${tracked()} tracked, not ${want}`);
    },
    async close(): Promise<void> {
      owner?.close();
      await remote?.close();
      for (const p of [...own.ports, other.port]) p.close();
      await tracker.close();
    },
  };
}
