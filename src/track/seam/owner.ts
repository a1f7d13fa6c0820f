/**
 * The owner's end of the seam (docs/tracking.md#one-tracker-per-process): worker 0 owns each
 * tracked chain's tracker and watcher, and serves every other worker (remote.ts): it reads the
 * acceptances each writes into its ring (ring.ts, records of handed.ts; written after the
 * answer's decision, never waiting: docs/tracking.md#the-hand-off), answers the status of a hash
 * and pushes every change of the chains a worker listens to, in order (one port, first in first
 * out). It reads a worker's ring whenever it is woken for it and before each message of its port
 * (a status asked after an acceptance finds it), and whenever a tracker needs what was handed
 * over (its `HandOff`: before each lookup of a hash and each watcher pass).
 *
 * The owner makes its trackers (`TrackOwnerParts.trackers`), giving each itself as its hand-off:
 * nothing is wired after construction.
 */
import type { MessagePort } from 'node:worker_threads';
import type { Logger } from '../../log/log.js';
import type { HandOff, Tracker } from '../tracker.js';
import { ACCEPTED, HandedReader, type HandedSink } from './handed.js';
import type { FromOwner, ToOwner } from './protocol.js';
import { RingReader } from './ring.js';

/** What the owner is made of: the ports and rings of every other worker, and the making of its trackers. */
export interface TrackOwnerParts {
  readonly ports: readonly MessagePort[];
  readonly rings: readonly SharedArrayBuffer[];
  readonly log: Logger;
  /** The trackers this thread owns, by chain id, each made with `handOff` (the owner) as its hand-off. */
  readonly trackers: (handOff: HandOff) => ReadonlyMap<number, Tracker>;
}

/** A tracker as a ring's records reach it: each acceptance given read, a record that does not read counted. */
export interface HandedTarget extends HandedSink {
  /** Acceptances not handed over, or whose record did not read as one: counted as a full table's. */
  lostInHandOff(n: number): void;
}

/**
 * Each record of one ring as it is drained (`RingReader.drain`'s `take`): a name taken, an
 * acceptance read into a request and given to its chain's tracker (none: let go; one that does
 * not read as an acceptance: counted, never tracked).
 */
export function handedTaker(handed: HandedReader, trackerOf: (chainId: number) => HandedTarget | undefined, log: Logger) {
  return (at: number, size: number, kind: number): void => {
    if (handed.takeName(at, size, kind) || kind !== ACCEPTED) return;
    const t = trackerOf(handed.chainOf(at));
    if (t === undefined) return;
    try {
      if (!handed.take(at, size, t)) t.lostInHandOff(1);
    } catch (err) {
      log.error({ err }, 'tracker: an acceptance could not be tracked (the submission is unaffected)');
    }
  };
}

export class TrackOwner implements HandOff {
  readonly trackers: ReadonlyMap<number, Tracker>;
  private readonly ports: readonly MessagePort[];
  private readonly log: Logger;
  private readonly offs: (() => void)[] = [];
  private readonly readers: RingReader[] = [];
  private readonly drains: (() => void)[] = [];
  /** Trackers with a listener now (a lane subscription on any thread). */
  private listened = 0;
  private closed = false;

  constructor(parts: TrackOwnerParts) {
    this.ports = parts.ports;
    this.log = parts.log;
    this.trackers = parts.trackers(this);
    parts.ports.forEach((port, i) => {
      const listening = new Map<number, () => void>();
      this.offs.push(() => {
        for (const off of listening.values()) off();
      });
      const ring = new RingReader(parts.rings[i]!);
      const take = handedTaker(new HandedReader(ring), (chainId) => this.trackers.get(chainId), this.log);
      const drain = () => {
        const skipped = ring.drain(take);
        if (skipped > 0) this.log.error({ bytes: skipped }, 'tracker: a hand-off ring held a record it could not read; the rest was skipped');
      };
      this.readers.push(ring);
      this.drains.push(drain);
      ring.sleep(drain);
      port.on('message', (m: ToOwner) => {
        drain();
        this.message(port, listening, m);
      });
      port.unref();
    });
    this.wakeFor();
  }

  /** Every acceptance written so far, taken now (as each ring's wake-up would). */
  catchUp(): void {
    if (this.closed) return;
    for (const drain of this.drains) drain();
  }

  listening(on: boolean): void {
    this.listened += on ? 1 : -1;
    this.wakeFor();
  }

  /**
   * Where a lane subscription of a tracked chain listens (on any thread), acceptances are read as
   * they are written (it is told of each at once); elsewhere when a status or a pass needs them.
   */
  private wakeFor(): void {
    if (this.closed) return;
    const on = this.listened > 0;
    for (const r of this.readers) r.atOnce(on);
    if (on) this.catchUp();
  }

  private message(port: MessagePort, listening: Map<number, () => void>, m: ToOwner): void {
    try {
      const t = this.trackers.get(m.chainId);
      if (m.kind === 'lost') t?.lostInHandOff(m.n);
      else if (m.kind === 'status') {
        const e = t?.own(m.account, m.hash) ?? null;
        port.postMessage({ kind: 'status', id: m.id, json: e === null ? null : t!.statusOf(e) } satisfies FromOwner);
      } else if (m.on && !listening.has(m.chainId) && t !== undefined) {
        let batch: [string, string, string][] = [];
        const flush = () => {
          const items = batch;
          batch = [];
          port.postMessage({ kind: 'changes', chainId: m.chainId, items } satisfies FromOwner);
        };
        listening.set(
          m.chainId,
          t.listen((e, status) => {
            if (batch.length === 0) setImmediate(flush);
            batch.push([e.account, e.hash, status]);
          }),
        );
      } else if (!m.on) {
        listening.get(m.chainId)?.();
        listening.delete(m.chainId);
      }
    } catch (err) {
      this.log.error({ err }, 'tracker: a message from another thread could not be handled');
    }
  }

  /** The ports and rings let go; the trackers (closed by their maker) read nothing more from them. */
  close(): void {
    for (const off of this.offs) off();
    this.closed = true;
    for (const r of this.readers) r.close();
    for (const p of this.ports) p.close();
  }
}
