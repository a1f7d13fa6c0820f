/**
 * One tracker per process (docs/tracking.md#one-tracker-per-process): with several worker threads,
 * worker 0 owns each tracked chain's tracker and watcher; every other worker writes its
 * acceptances into a ring of shared memory of its own (base/shared-ring.ts, records of
 * track/handed.ts; after the answer's decision, never waiting: docs/tracking.md#the-hand-off),
 * and over a MessagePort of its own asks the owner the status of a hash and tells it which chains
 * it holds WebSocket subscriptions for; the owner pushes every change of those chains back, in
 * order (one port, first in first out). The owner reads a worker's ring whenever it is written
 * and before each message of its port (a status asked after an acceptance finds it). A status
 * the owner does not hold for the account is answered from the chain by the thread asked, as on
 * the owner.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { MessagePort } from 'node:worker_threads';
import { EpochClock, waited } from '../base/epoch-clock.js';
import type { Exit } from '../base/errors.js';
import type { ForwardRequest } from '../forward/parts.js';
import type { Logger } from '../log/log.js';
import { chainAnswer, statusExit } from '../track/chain-status.js';
import { ACCEPTED, HandedReader, HandedWriter, TOO_BIG } from '../track/handed.js';
import type { Tracker } from '../track/tracker.js';
import type { ChainRpc } from '../upstreams/chain-rpc/chain-rpc.js';
import type { FeedListener } from '../ws/subscriptions.js';
import { allocateRing, RingReader, RingWriter } from '../base/shared-ring.js';

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

type ToOwner =
  | { readonly t: 'lost'; readonly chainId: number; readonly n: number }
  | { readonly t: 'status'; readonly id: number; readonly chainId: number; readonly account: string; readonly hash: string }
  | { readonly t: 'listen'; readonly chainId: number; readonly on: boolean };

type FromOwner =
  | { readonly t: 'changes'; readonly chainId: number; readonly items: readonly (readonly [string, string, string])[] }
  | { readonly t: 'status'; readonly id: number; readonly json: string | null };

/** How long a status query waits for the owner before the chain answers it. */
const OWNER_MS = 2_000;
/** Acceptances kept waiting for room in a full ring, and how often room is looked for. */
const MAX_WAITING = 20_000;
const RETRY_MS = 2;

interface Spilled {
  readonly chainId: number;
  readonly req: ForwardRequest;
  readonly sequencer: string;
  readonly rule: string;
  readonly now: number;
  readonly waited: number;
}

/** The owner's side: serves every other worker's port. */
export class TrackOwner {
  private readonly offs: (() => void)[] = [];

  private readonly readers: RingReader[] = [];
  private readonly drains: (() => void)[] = [];

  constructor(
    private readonly trackers: ReadonlyMap<number, Tracker>,
    private readonly ports: readonly MessagePort[],
    rings: readonly SharedArrayBuffer[],
    private readonly log: Logger,
  ) {
    ports.forEach((port, i) => {
      const listening = new Map<number, () => void>();
      this.offs.push(() => {
        for (const off of listening.values()) off();
      });
      const ring = new RingReader(rings[i]!);
      const handed = new HandedReader(ring);
      const take = (at: number, size: number, kind: number) => {
        if (handed.takeName(at, size, kind) || kind !== ACCEPTED) return;
        this.trackers.get(handed.chainOf(at))?.acceptedElsewhere(handed, at, size);
      };
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
    for (const t of trackers.values()) {
      t.catchUp = () => this.readAll();
      t.listenersChanged = () => this.listenedChanged();
    }
    this.listenedChanged();
  }

  /**
   * Where a lane subscription of a tracked chain listens (on any thread), acceptances are read as
   * they are written (it is told of each at once); elsewhere when a status or a pass needs them.
   */
  private listenedChanged(): void {
    const on = [...this.trackers.values()].some((t) => t.listened);
    for (const r of this.readers) r.atOnce(on);
    if (on) this.readAll();
  }

  private message(port: MessagePort, listening: Map<number, () => void>, m: ToOwner): void {
    try {
      const t = this.trackers.get(m.chainId);
      if (m.t === 'lost') t?.lostInHandOff(m.n);
      else if (m.t === 'status') {
        const e = t?.own(m.account, m.hash) ?? null;
        port.postMessage({ t: 'status', id: m.id, json: e === null ? null : t!.statusOf(e) } satisfies FromOwner);
      } else if (m.on && !listening.has(m.chainId) && t !== undefined) {
        let batch: [string, string, string][] = [];
        const flush = () => {
          const items = batch;
          batch = [];
          port.postMessage({ t: 'changes', chainId: m.chainId, items } satisfies FromOwner);
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

  /** Every acceptance written so far, taken now (as each ring's wake-up would). */
  readAll(): void {
    for (const drain of this.drains) drain();
  }

  close(): void {
    for (const t of this.trackers.values()) {
      t.catchUp = () => undefined;
      t.listenersChanged = () => undefined;
    }
    for (const off of this.offs) off();
    for (const r of this.readers) r.close();
    for (const p of this.ports) p.close();
  }
}

/** Another worker's end of the seam: one port to the owner, shared by its chains. */
export class TrackRemote {
  private nextId = 0;
  private readonly waiting = new Map<number, (json: string | null) => void>();
  private readonly listeners = new Map<number, Set<FeedListener>>();
  private readonly writer: HandedWriter;
  private readonly clock = new EpochClock();
  /** Acceptances waiting for room in the ring, in order (none while the owner keeps up). */
  private readonly waitingRoom: Spilled[] = [];
  private retry: NodeJS.Timeout | null = null;
  /** Acceptances not handed over (the waiting room full), per chain, not yet told to the owner. */
  private readonly lost = new Map<number, number>();

  constructor(
    private readonly port: MessagePort,
    ring: SharedArrayBuffer,
    private readonly log: Logger,
  ) {
    this.writer = new HandedWriter(new RingWriter(ring));
    port.on('message', (m: FromOwner) => this.message(m));
    port.unref();
  }

  private message(m: FromOwner): void {
    try {
      if (m.t === 'status') this.waiting.get(m.id)?.(m.json);
      else {
        const fns = this.listeners.get(m.chainId);
        if (fns === undefined) return;
        for (const [account, hash, status] of m.items) for (const fn of fns) fn({ account, hash }, status);
      }
    } catch (err) {
      this.log.error({ err }, 'tracker: a message from the owner thread could not be handled');
    }
  }

  /**
   * Hands a chain's acceptance over: written into the ring at once, or, when the owner is
   * behind, kept in order until there is room (up to MAX_WAITING; past that it is not tracked,
   * and the owner counts it as a table full would: docs/tracking.md#the-hand-off).
   */
  hand(chainId: number, req: ForwardRequest, sequencer: string, rule: string): void {
    // One clock read: the acceptance's epoch time and the wait since the request arrived (base/epoch-clock.ts).
    const t = performance.now();
    const now = this.clock.epochOf(t);
    const wait = waited(req.t0, t);
    const written = this.waitingRoom.length === 0 ? this.writer.write(chainId, req, sequencer, rule, now, wait) : false;
    if (written === true) return;
    if (written === TOO_BIG || this.waitingRoom.length >= MAX_WAITING) {
      if (this.lost.size === 0) setImmediate(() => this.tellLost());
      this.lost.set(chainId, (this.lost.get(chainId) ?? 0) + 1);
      return;
    }
    this.waitingRoom.push({ chainId, req, sequencer, rule, now, waited: wait });
    this.retry ??= setTimeout(() => this.handWaiting(), RETRY_MS);
  }

  private handWaiting(): void {
    this.retry = null;
    let k = 0;
    for (const s of this.waitingRoom) {
      if (this.writer.write(s.chainId, s.req, s.sequencer, s.rule, s.now, s.waited) === false) break;
      k++;
    }
    this.waitingRoom.splice(0, k);
    if (this.waitingRoom.length > 0) this.retry = setTimeout(() => this.handWaiting(), RETRY_MS);
  }

  private tellLost(): void {
    this.log.error(
      { lost: [...this.lost.values()].reduce((a, b) => a + b, 0) },
      'tracker: acceptances not tracked: not handed over (the owner thread far behind, or a record larger than the ring; the submissions are unaffected)',
    );
    for (const [chainId, n] of this.lost) this.port.postMessage({ t: 'lost', chainId, n } satisfies ToOwner);
    this.lost.clear();
  }

  /** The owner's status object of the account's own hash, or null (it holds none; no answer in time). */
  ask(chainId: number, account: string, hash: string): Promise<string | null> {
    const id = ++this.nextId;
    return new Promise((resolve) => {
      const done = (json: string | null) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(json);
      };
      const timer = setTimeout(() => done(null), OWNER_MS);
      this.waiting.set(id, done);
      this.port.postMessage({ t: 'status', id, chainId, account, hash } satisfies ToOwner);
    });
  }

  listen(chainId: number, fn: FeedListener): () => void {
    let fns = this.listeners.get(chainId);
    if (fns === undefined) this.listeners.set(chainId, (fns = new Set()));
    fns.add(fn);
    if (fns.size === 1) this.port.postMessage({ t: 'listen', chainId, on: true } satisfies ToOwner);
    return () => {
      if (!fns.delete(fn) || fns.size > 0) return;
      this.port.postMessage({ t: 'listen', chainId, on: false } satisfies ToOwner);
    };
  }

  close(): void {
    if (this.retry !== null) clearTimeout(this.retry);
    for (const done of [...this.waiting.values()]) done(null);
    this.port.close();
  }
}

/** A tracked chain on a worker that does not own its tracker: acceptances handed over, status and changes asked of the owner. */
export class RemoteTracker {
  constructor(
    private readonly chainId: number,
    /** The chain link's client of the chain RPC (a status from the chain alone); closed by the link. */
    private readonly rpc: ChainRpc,
    private readonly seam: TrackRemote,
  ) {}

  accepted(req: ForwardRequest, sequencer: string, rule: string): void {
    this.seam.hand(this.chainId, req, sequencer, rule);
  }

  async status(account: string, hash: string): Promise<Exit> {
    const json = await this.seam.ask(this.chainId, account, hash);
    return json !== null ? statusExit(json) : chainAnswer(this.rpc, this.chainId, hash);
  }

  listen(fn: FeedListener): () => void {
    return this.seam.listen(this.chainId, fn);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
