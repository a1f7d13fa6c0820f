/**
 * The seam's parts and messages (docs/tracking.md#one-tracker-per-process): with several worker
 * threads, worker 0 owns each tracked chain's tracker (owner.ts); every other worker hands its
 * acceptances over through a ring of shared memory of its own (ring.ts, records of handed.ts)
 * and asks statuses and receives pushes over a MessagePort of its own (remote.ts). The ports'
 * channel is made by whoever starts the threads (service.ts gives node's MessageChannel): this
 * room uses the ports it is given and never starts a thread.
 */
import type { MessagePort } from 'node:worker_threads';
import { allocateRing } from './ring.js';

/**
 * A worker's part of the seam: the owner holds a port and a ring from every other worker; each
 * other worker its port to the owner and the ring it writes.
 */
export type TrackSeamPart =
  | { readonly role: 'owner'; readonly ports: readonly MessagePort[]; readonly rings: readonly SharedArrayBuffer[] }
  | { readonly role: 'remote'; readonly port: MessagePort; readonly ring: SharedArrayBuffer };

/** A worker's ring: about 4,000 acceptances of a 115-byte transaction before the owner must have read them. */
export const RING_BYTES = 1 << 20;

/** The parts of a process of `workers` threads (none with one): worker 0 owns, every other hands over. */
export function seamParts(workers: number, channel: () => { port1: MessagePort; port2: MessagePort }): TrackSeamPart[] {
  const links = Array.from({ length: workers - 1 }, () => ({ ...pair(channel()), ring: allocateRing(RING_BYTES) }));
  if (links.length === 0) return [];
  return [
    { role: 'owner', ports: links.map((l) => l.owner), rings: links.map((l) => l.ring) },
    ...links.map((l): TrackSeamPart => ({ role: 'remote', port: l.remote, ring: l.ring })),
  ];
}

const pair = (c: { port1: MessagePort; port2: MessagePort }) => ({ owner: c.port1, remote: c.port2 });

/** Another worker → the owner. */
export type ToOwner =
  | { readonly kind: 'lost'; readonly chainId: number; readonly n: number }
  | { readonly kind: 'status'; readonly id: number; readonly chainId: number; readonly account: string; readonly hash: string }
  | { readonly kind: 'listen'; readonly chainId: number; readonly on: boolean };

/** The owner → another worker. */
export type FromOwner =
  | { readonly kind: 'changes'; readonly chainId: number; readonly items: readonly (readonly [string, string, string])[] }
  | { readonly kind: 'status'; readonly id: number; readonly json: string | null };
