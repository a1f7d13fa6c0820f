/**
 * What the fleet store holds (store.ts composes it): every row's version and verdict by account
 * id, the in-memory snapshot served from them (snapshot.ts), the key hashes each account holds,
 * and the changes not yet handed to the listeners (the worker threads' mirrors, mirror.ts).
 *
 * Key hashes: migration 002 makes the database refuse a second account holding a key; should a
 * snapshot still have two accounts claim one (a database not yet migrated), the account that held
 * it first keeps it (at start, with nothing held yet, the account first by id) and the newcomer's
 * claim is refused, logged once; the key goes to the waiting claimer only when its holder gives it
 * up. A key never moves silently. A refused row is logged once per version with its id and why,
 * its account is not served, and the others stay in force.
 */
import type { Logger } from '../../log/log.js';
import type { Account } from '../types.js';
import type { RowVerdict } from './row-check.js';
import { accountFromWire, LiveSnapshot, type AccountChange, type AccountWire } from './snapshot.js';

/** What the edge holds of one row (a refused row too: its version, so it is not fetched again). */
export interface Held {
  readonly version: number;
  readonly account: Account | null;
  readonly wire: AccountWire | null;
  /** The key hashes the row lists. */
  readonly claimed: readonly string[];
  /** Those it holds (a hash another account held first is not). */
  readonly keys: string[];
}

export class Holdings {
  /** The snapshot in force (the store's lookups). */
  readonly snap = new LiveSnapshot();
  private readonly held = new Map<string, Held>();
  /** Key hash → the account holding it. */
  private readonly owner = new Map<string, string>();
  /** Key hash → accounts whose claim on it was refused, the first claimer first. */
  private readonly waiting = new Map<string, string[]>();
  /** Refusals already logged: `id` → version, `id/hash` for key claims. */
  private readonly refusedLogged = new Map<string, number>();
  private readonly claimLogged = new Set<string>();
  /** Changes made since they were last handed to the listeners. */
  private changes: AccountChange[] = [];
  private readonly changeListeners: ((changes: readonly AccountChange[]) => void)[] = [];

  /** `loaded`: whether the first load is in force (claims settle by id before it; nothing is handed over before it). */
  constructor(
    private readonly log: Logger,
    private readonly loaded: () => boolean,
  ) {}

  /** What the edge holds of the account's row. */
  get(id: string): Held | undefined {
    return this.held.get(id);
  }

  /** The accounts whose rows the edge holds. */
  ids(): string[] {
    return [...this.held.keys()];
  }

  /** Called with the accounts changed, on every `emit`. */
  onChange(cb: (changes: readonly AccountChange[]) => void): void {
    this.changeListeners.push(cb);
  }

  /** Every account in force, as changes (a mirror's start). */
  current(): AccountChange[] {
    const out: AccountChange[] = [];
    for (const [id, h] of this.held) if (h.wire !== null) out.push({ id, account: h.wire, keys: [...h.keys] });
    return out;
  }

  /** A checked row put in force (refused: its account not served, logged once per version). */
  install(v: RowVerdict): void {
    if (!v.ok) {
      if (this.refusedLogged.get(v.id) !== v.version) {
        this.refusedLogged.set(v.id, v.version);
        this.log.error(
          { account: v.id, version: v.version, problems: v.problems },
          `account row refused: ${v.problems.join('; ')} (the other accounts stay in force)`,
        );
      }
      this.set(v.id, v.version, null, null, []);
      return;
    }
    this.refusedLogged.delete(v.id);
    this.set(v.id, v.version, accountFromWire(v.account), v.account, v.keys);
  }

  /** An account whose row is gone. */
  remove(id: string): void {
    this.set(id, 0, null, null, []);
    this.held.delete(id);
    this.refusedLogged.delete(id);
  }

  /** The account's new row (account null: refused or gone), its key claims settled. */
  private set(id: string, version: number, account: Account | null, wire: AccountWire | null, claimed: readonly string[]): void {
    const prev = this.held.get(id);
    const now = new Set(claimed);
    const freed: string[] = [];
    for (const h of prev?.keys ?? [])
      if (!now.has(h)) {
        this.owner.delete(h);
        freed.push(h);
      }
    for (const h of prev?.claimed ?? []) if (!now.has(h)) this.unwait(h, id);
    const keys: string[] = [];
    const lost: string[] = [];
    for (const h of claimed) {
      const o = this.owner.get(h);
      if (o === undefined || o === id) {
        this.owner.set(h, id);
        keys.push(h);
        this.unwait(h, id);
        continue;
      }
      if (!this.loaded() && id < o) {
        // The first load (nothing served yet): the first by id holds it, whatever order the
        // rows arrived in (small ones first, large ones from the checker's thread).
        this.owner.set(h, id);
        keys.push(h);
        this.unwait(h, id);
        lost.push(o);
        this.refuseClaim(o, this.held.get(o)?.version ?? 0, h, id, true);
        continue;
      }
      this.refuseClaim(id, version, h, o, false);
    }
    this.held.set(id, { version, account, wire, claimed: account === null ? [] : claimed, keys });
    this.changed(id, account, wire, keys);
    for (const o of lost) {
      const n = this.held.get(o);
      if (n === undefined) continue;
      const left = n.keys.filter((h) => this.owner.get(h) === o);
      this.held.set(o, { ...n, keys: left });
      this.changed(o, n.account, n.wire, left);
    }
    for (const h of freed) this.handOver(h);
  }

  /** `id`'s claim on `h` refused (`holder` keeps it), logged once; `first`: put before the other waiting claimers. */
  private refuseClaim(id: string, version: number, h: string, holder: string, first: boolean): void {
    const w = this.waiting.get(h) ?? [];
    if (!w.includes(id)) first ? w.unshift(id) : w.push(id);
    this.waiting.set(h, w);
    if (this.claimLogged.has(`${id}/${h}`)) return;
    this.claimLogged.add(`${id}/${h}`);
    this.log.error(
      { account: id, version, holder, keyHash: h.slice(0, 12) },
      `account "${id}" lists key hash ${h.slice(0, 12)}… which account "${holder}" holds: the claim is refused, the key stays with "${holder}"`,
    );
  }

  /** A key its holder gave up goes to the first account still claiming it. */
  private handOver(h: string): void {
    const w = this.waiting.get(h);
    const next = w?.shift();
    if (w !== undefined && w.length === 0) this.waiting.delete(h);
    if (next === undefined) return;
    const n = this.held.get(next);
    if (n === undefined || n.account === null) {
      this.handOver(h);
      return;
    }
    this.owner.set(h, next);
    n.keys.push(h);
    this.claimLogged.delete(`${next}/${h}`);
    this.log.info({ account: next, keyHash: h.slice(0, 12) }, `key hash ${h.slice(0, 12)}… given up by its holder: now held by "${next}", which listed it`);
    this.changed(next, n.account, n.wire, n.keys);
  }

  private unwait(h: string, id: string): void {
    const w = this.waiting.get(h);
    if (w === undefined) return;
    const i = w.indexOf(id);
    if (i >= 0) w.splice(i, 1);
    if (w.length === 0) this.waiting.delete(h);
    this.claimLogged.delete(`${id}/${h}`);
  }

  private changed(id: string, account: Account | null, wire: AccountWire | null, keys: readonly string[]): void {
    this.snap.apply(id, account, keys);
    this.changes.push({ id, account: wire, keys: [...keys] });
  }

  /** Hands the changes made to the listeners (once the first load is in force; `always`: even none). */
  emit(always = false): void {
    if (!this.loaded() || (this.changes.length === 0 && !always)) return;
    const changes = this.changes;
    this.changes = [];
    for (const cb of this.changeListeners) cb(changes);
  }
}
