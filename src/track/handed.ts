/**
 * An acceptance handed over by another worker thread to the thread that owns the tracker
 * (threads/track-seam.ts, docs/tracking.md#one-tracker-per-process): written into the turn's
 * batch on the thread that accepted it, read into an entry on the owner. The batch is one flat
 * array, `STRIDE` values an acceptance (no array or object per acceptance on either side); this
 * file alone knows the layout: hash, raw hex, account, sender, accepted at (epoch ms), the
 * acceptance's wait (ms from the request's arrival: a small integer), sequencer, rule, a
 * conditional send's bounds (track/expiry.ts).
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { Bounds } from './expiry.js';
import { Entry, type TrackTable } from './table.js';

/** A turn's acceptances of one chain, as the port carries them. */
export type HandedBatch = (string | number | null | Bounds | undefined)[];

const STRIDE = 9;

/** The forward's request, as far as a hand-off reads it (forward/parts.ts's ForwardRequest). */
export interface HandedRequest {
  readonly hash: string;
  readonly rawHex: string;
  readonly account: string;
  readonly sender: string | null;
  /** When the request arrived (performance.now() on this thread). */
  readonly t0?: number;
  readonly conditional?: Bounds | undefined;
}

/** Appends `req`'s acceptance by `sequencer` and `rule`, accepted now, to the turn's batch. */
export function handOver(batch: HandedBatch, req: HandedRequest, sequencer: string, rule: string): void {
  // Epoch ms from the wall clock (as the owner's watcher keeps its own), the wait from the monotonic one.
  const now = Date.now();
  const waited = req.t0 === undefined ? 0 : Math.max(0, Math.round(performance.now() - req.t0));
  const c = req.conditional;
  const bounds = c === undefined ? undefined : { blockNumberMax: c.blockNumberMax, timestampMax: c.timestampMax };
  batch.push(req.hash, req.rawHex, req.account, req.sender, now, waited, sequencer, rule, bounds);
}

/** The acceptances in a batch: their count (a batch cut short is read as far as it is whole). */
export function handedCount(batch: HandedBatch): number {
  return Math.floor(batch.length / STRIDE);
}

/**
 * The entry of the batch's `k`th acceptance. Its strings are the port's copies: the entry keeps
 * the table's one copy of its account, sequencer, rule and sender (intern.ts) instead.
 */
export function handedEntry(batch: HandedBatch, k: number, table: TrackTable): Entry {
  const i = k * STRIDE;
  const acceptedAt = batch[i + 4] as number;
  const sender = batch[i + 3] as string | null;
  return new Entry({
    hash: batch[i] as string,
    raw: batch[i + 1] as string,
    account: table.name(batch[i + 2] as string),
    sender: sender === null ? null : table.sender(sender),
    acceptedAt,
    receivedAt: acceptedAt - (batch[i + 5] as number),
    sequencer: table.name(batch[i + 6] as string),
    rule: table.name(batch[i + 7] as string),
  });
}

/** The batch's `k`th acceptance's bounds (a conditional send), else undefined. */
export function handedBounds(batch: HandedBatch, k: number): Bounds | undefined {
  return batch[k * STRIDE + 8] as Bounds | undefined;
}
