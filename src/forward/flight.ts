/**
 * One send in flight, whatever its kind (plain, conditional, sync): what every kind shares,
 * written once (docs/architecture.md#the-request-path). A kind brings only its own: its call
 * and readings (a SendMethod, parts.ts), the table its identical sends meet in, its places, its
 * bookkeeping at the end.
 * - Identical sends arriving meanwhile join its outcome (a promise made only when one joins).
 * - It holds one of its kind's places (the chain's `maxInFlight`, or `sync.maxWaiting`).
 * - It ends once: its place, its table, its kind's bookkeeping, the joiners, then the answer; a
 *   throw of the rules (a bug) is said and answered upstream_error with the hash (uncertain).
 * The answer is the flight itself, a Later the pipeline awaits (src/pipeline/later.ts): the
 * pipeline resumes from its `settle` and keeps its own throws; nothing here catches them.
 */
import type { Exit } from '../base/errors.js';
import type { Logger } from '../log/log.js';
import { Later } from '../pipeline/later.js';
import { uncertain } from './answer.js';
import type { Concluded, ForwardRequest } from './parts.js';

/** Where a kind's flights meet by key (an InFlight for hashes, a Map for other keys). */
export interface FlightTable {
  get(key: string): Flight | undefined;
  set(key: string, f: Flight): void;
  delete(key: string): unknown;
}

/** A kind's places on this thread, the count told to a metrics hook whose throw is said once and breaks nothing. */
export class Places {
  private n = 0;
  private said = false;

  constructor(
    readonly max: number,
    /** The metrics hook, told the chain and the count (a method bound to its observer). */
    private readonly hook: ((chainId: number, n: number) => void) | undefined,
    private readonly chainId: number,
    private readonly log: Logger,
    private readonly hookFailed: string,
  ) {}

  get count(): number {
    return this.n;
  }

  take(): boolean {
    if (this.n >= this.max) return false;
    this.n++;
    this.tell();
    return true;
  }

  give(): void {
    this.n--;
    this.tell();
  }

  private tell(): void {
    if (this.hook === undefined) return;
    try {
      this.hook(this.chainId, this.n);
    } catch (e) {
      if (this.said) return;
      this.said = true;
      this.log.error({ err: e, chainId: this.chainId }, this.hookFailed);
    }
  }
}

/** What a kind of send gives its flights. */
export interface FlightsOf {
  readonly table: FlightTable;
  readonly places: Places;
  readonly log: Logger;
  /** The line that says the rules threw: `… failed unexpectedly: outcome uncertain`. */
  readonly failure: string;
  /** The kind's own bookkeeping at a flight's end (the outcome kept, a metric); a throw is said, the outcome stands. */
  readonly ended?: ((f: Flight, exit: Exit) => void) | undefined;
}

/** One kind's flights on one chain and thread. */
export class Flights {
  constructor(private readonly of: FlightsOf) {}

  joined(key: string): Promise<Exit> | undefined {
    return this.of.table.get(key)?.join();
  }

  /** A flight for `req`, its place taken, in the table before anything is sent; null: none free. */
  open(key: string, req: ForwardRequest): Flight | null {
    if (!this.of.places.take()) return null;
    const f = new Flight(this, key, req);
    this.of.table.set(key, f);
    return f;
  }

  end(f: Flight, exit: Exit): void {
    this.of.places.give();
    const { table } = this.of;
    if (table.get(f.key) === f) table.delete(f.key);
    const ended = this.of.ended;
    if (ended === undefined) return;
    try {
      ended(f, exit);
    } catch (e) {
      this.of.log.error({ err: e, tx: f.req.hash, reqId: f.req.reqId }, 'a send hook failed: the outcome stands');
    }
  }

  failed(f: Flight, e: unknown): void {
    const { req } = f;
    this.of.log.error({ err: e, tx: req.hash, account: req.account, reqId: req.reqId }, this.of.failure);
  }
}

export class Flight extends Later<Exit> implements Concluded {
  private joiners: Promise<Exit> | null = null;
  private tell: ((x: Exit) => void) | null = null;
  private over = false;
  /** When the send started, where its kind measures it (the sync send's wait); else 0. */
  started = 0;

  constructor(
    private readonly flights: Flights,
    readonly key: string,
    readonly req: ForwardRequest,
  ) {
    super();
  }

  /** The outcome, for an identical send that arrived meanwhile. */
  join(): Promise<Exit> {
    return (this.joiners ??= new Promise<Exit>((told) => {
      this.tell = told;
    }));
  }

  concluded(exit: Exit): void {
    if (this.over) return;
    this.over = true;
    this.flights.end(this, exit);
    this.tell?.(exit);
    this.settle(exit);
  }

  failed(e: unknown): void {
    this.flights.failed(this, e);
    this.concluded(uncertain(this.req.hash));
  }
}
