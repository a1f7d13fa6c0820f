/**
 * One tracker per process (docs/tracking.md#one-tracker-per-process): with several worker threads,
 * worker 0 owns each tracked chain's tracker and watcher; every other worker hands its
 * acceptances over in batches through a MessagePort of its own (after the answer, never on its
 * path), asks the owner the status of a hash, and tells it which chains it holds WebSocket
 * subscriptions for; the owner pushes every change of those chains back, in order (one port,
 * first in first out). A status the owner does not hold for the account is answered from the
 * chain by the thread asked, as on the owner.
 */
import type { MessagePort } from 'node:worker_threads';
import type { Exit } from '../base/errors.js';
import type { ForwardRequest } from '../forward/parts.js';
import type { Logger } from '../log/log.js';
import { chainAnswer, statusExit } from '../track/chain-status.js';
import type { ChainRpc } from '../upstreams/chain-rpc/chain-rpc.js';
import type { Tracker } from '../track/tracker.js';
import { type HandedBatch, handOver } from '../track/handed.js';
import type { FeedListener } from '../ws/subscriptions.js';

/** A worker's part of the seam: the owner holds a port to every other worker; each other worker its port to the owner. */
export type TrackSeamPart = { readonly role: 'owner'; readonly ports: readonly MessagePort[] } | { readonly role: 'remote'; readonly port: MessagePort };

type ToOwner =
  | { readonly t: 'accepted'; readonly chainId: number; readonly items: HandedBatch }
  | { readonly t: 'status'; readonly id: number; readonly chainId: number; readonly account: string; readonly hash: string }
  | { readonly t: 'listen'; readonly chainId: number; readonly on: boolean };

type FromOwner =
  | { readonly t: 'changes'; readonly chainId: number; readonly items: readonly (readonly [string, string, string])[] }
  | { readonly t: 'status'; readonly id: number; readonly json: string | null };

/** How long a status query waits for the owner before the chain answers it. */
const OWNER_MS = 2_000;

/** The owner's side: serves every other worker's port. */
export class TrackOwner {
  private readonly offs: (() => void)[] = [];

  constructor(
    private readonly trackers: ReadonlyMap<number, Tracker>,
    private readonly ports: readonly MessagePort[],
    private readonly log: Logger,
  ) {
    for (const port of ports) {
      const listening = new Map<number, () => void>();
      this.offs.push(() => {
        for (const off of listening.values()) off();
      });
      port.on('message', (m: ToOwner) => this.message(port, listening, m));
      port.unref();
    }
  }

  private message(port: MessagePort, listening: Map<number, () => void>, m: ToOwner): void {
    try {
      const t = this.trackers.get(m.chainId);
      if (m.t === 'accepted') t?.acceptedElsewhere(m.items);
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

  close(): void {
    for (const off of this.offs) off();
    for (const p of this.ports) p.close();
  }
}

/** Another worker's end of the seam: one port to the owner, shared by its chains. */
export class TrackRemote {
  private nextId = 0;
  private readonly waiting = new Map<number, (json: string | null) => void>();
  private readonly batches = new Map<number, HandedBatch>();
  private readonly listeners = new Map<number, Set<FeedListener>>();

  constructor(
    private readonly port: MessagePort,
    private readonly log: Logger,
  ) {
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

  /** The turn's batch of a chain's acceptances (track/handed.ts), handed over after this turn of the event loop. */
  batch(chainId: number): HandedBatch {
    let batch = this.batches.get(chainId);
    if (batch === undefined) {
      this.batches.set(chainId, (batch = []));
      setImmediate(() => {
        this.batches.delete(chainId);
        this.port.postMessage({ t: 'accepted', chainId, items: batch! } satisfies ToOwner);
      });
    }
    return batch;
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
    handOver(this.seam.batch(this.chainId), req, sequencer, rule);
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
