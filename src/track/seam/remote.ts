/**
 * Another worker's end of the seam (docs/tracking.md#one-tracker-per-process): it hands its
 * acceptances to the owner (owner.ts) through its ring (ring.ts, records of handed.ts), after the
 * answer's decision and never waiting (docs/tracking.md#the-hand-off), and over its port asks the
 * owner the status of a hash and tells it which chains it holds WebSocket subscriptions for; the
 * owner pushes every change of those chains back, in order. A status the owner does not hold for
 * the account, or does not answer before the question's signal ends it, is answered from the
 * chain by the thread asked, as on the owner.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { MessagePort } from 'node:worker_threads';
import { EpochClock, waited } from '../../base/epoch-clock.js';
import type { Exit } from '../../base/errors.js';
import type { ForwardRequest } from '../../forward/parts.js';
import type { Logger } from '../../log/log.js';
import type { ChainRpc } from '../../upstreams/chain-rpc/chain-rpc.js';
import { chainAnswer, statusExit } from '../chain-status.js';
import type { StatusListener, TrackedChain } from '../tracked.js';
import { HandedWriter, TOO_BIG } from './handed.js';
import type { FromOwner, ToOwner } from './protocol.js';
import { RingWriter } from './ring.js';

/** How long a status question waits for the owner before the chain answers it. */
export const OWNER_MS = 2_000;
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

/** Another worker's end of the seam: one port to the owner, shared by its chains. */
export class TrackRemote {
  private nextId = 0;
  private readonly waiting = new Map<number, (json: string | null) => void>();
  private readonly listeners = new Map<number, Set<StatusListener>>();
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
      if (m.kind === 'status') this.waiting.get(m.id)?.(m.json);
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
    for (const [chainId, n] of this.lost) this.port.postMessage({ kind: 'lost', chainId, n } satisfies ToOwner);
    this.lost.clear();
  }

  /**
   * The owner's status object of the account's own hash, or null: the owner holds none, or its
   * answer had not come when `signal` ended the wait (at once if it has ended), or the seam closed.
   */
  ask(chainId: number, account: string, hash: string, signal: AbortSignal): Promise<string | null> {
    if (signal.aborted) return Promise.resolve(null);
    const id = ++this.nextId;
    return new Promise((resolve) => {
      const done = (json: string | null) => {
        signal.removeEventListener('abort', abandoned);
        this.waiting.delete(id);
        resolve(json);
      };
      const abandoned = () => done(null);
      signal.addEventListener('abort', abandoned, { once: true });
      this.waiting.set(id, done);
      this.port.postMessage({ kind: 'status', id, chainId, account, hash } satisfies ToOwner);
    });
  }

  listen(chainId: number, fn: StatusListener): () => void {
    let fns = this.listeners.get(chainId);
    if (fns === undefined) this.listeners.set(chainId, (fns = new Set()));
    fns.add(fn);
    if (fns.size === 1) this.port.postMessage({ kind: 'listen', chainId, on: true } satisfies ToOwner);
    return () => {
      if (!fns.delete(fn) || fns.size > 0) return;
      this.port.postMessage({ kind: 'listen', chainId, on: false } satisfies ToOwner);
    };
  }

  close(): void {
    if (this.retry !== null) clearTimeout(this.retry);
    for (const done of [...this.waiting.values()]) done(null);
    this.port.close();
  }
}

/** A tracked chain on a worker that does not own its tracker: acceptances handed over, status and changes asked of the owner. */
export class RemoteTracker implements TrackedChain {
  constructor(
    private readonly chainId: number,
    /** The chain link's client of the chain RPC (a status from the chain alone); closed by the link. */
    private readonly rpc: ChainRpc,
    private readonly seam: TrackRemote,
  ) {}

  accepted(req: ForwardRequest, sequencer: string, rule: string): void {
    this.seam.hand(this.chainId, req, sequencer, rule);
  }

  /** The owner's answer, given `OWNER_MS` to come; else (or where it holds none) the chain's. */
  async status(account: string, hash: string): Promise<Exit> {
    const json = await this.seam.ask(this.chainId, account, hash, AbortSignal.timeout(OWNER_MS));
    return json !== null ? statusExit(json) : chainAnswer(this.rpc, this.chainId, hash);
  }

  listen(fn: StatusListener): () => void {
    return this.seam.listen(this.chainId, fn);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
