/**
 * An acceptance handed over by another worker thread to the thread that owns the tracker
 * (owner.ts, docs/tracking.md#the-hand-off): written as one record into the shared ring of
 * ring.ts on the thread that accepted it, read on the owner back into the forward's request
 * (forward/parts.ts's ForwardRequest, the one request type), given to the chain's tracker with
 * who accepted it, by which rule and when.
 * This file alone knows the records' layout. An account, sequencer label or rule travels once, as
 * a name record, and then as its number (`names`: a name is not copied per acceptance, and the
 * owner keeps its one string for it, across every chain it reads for); a hash, the signed bytes'
 * hex and a sender as their characters (a hex string is copied by one memcpy; the decoded bytes
 * would cross shared memory a byte at a time, V8's copy into a SharedArrayBuffer: measured dearer).
 *
 * An acceptance, from its record's start (after the ring's size and kind words):
 *   8 chain id (f64) · 16 accepted at (epoch ms, f64) · 24 the wait since the request's arrival
 *   (ms, f64) · 32 account, 36 sequencer, 40 rule (name numbers) · 44 flags (1: a sender) ·
 *   48.. the lengths of the hash, raw hex, sender, blockNumberMax and timestampMax (hex; 0: none)
 *   · 68 (unused) · 72 their characters, one byte each.
 * A name: 8 its number · 12 its UTF-8 length · 16 its bytes. `RESET`: every number forgotten.
 */
import type { ForwardRequest } from '../../forward/parts.js';
import type { Bounds } from '../expiry.js';
import { type RingViews, RingWriter } from './ring.js';

/** The records' kinds (0 is the ring's own). */
export const ACCEPTED = 1;
export const NAME = 2;
export const RESET = 3;

const STRINGS = 72;
const HAS_SENDER = 1;
/** What `HandedWriter.write` says of a record larger than the whole ring. */
export const TOO_BIG = 'too big';
/** Names a writer numbers before it starts over (a RESET record). */
const MAX_NAMES = 65_536;

/** Who a handed acceptance is given to once read: its chain's tracker (tracker.ts). */
export interface HandedSink {
  /**
   * `req` accepted on another thread by `sequencer` and `rule`, at `acceptedAt` (epoch ms),
   * `waited` ms after the request arrived.
   */
  acceptedElsewhere(req: ForwardRequest, sequencer: string, rule: string, acceptedAt: number, waited: number): void;
}

const hexOf = (v: bigint | null): string => (v === null ? '' : v.toString(16));

/** The accepting thread's end: acceptances written into its ring. */
export class HandedWriter {
  private readonly names = new Map<string, number>();
  /** The last account, sequencer and rule named, and their numbers: most acceptances repeat them (no map lookup). */
  private lastAccount = '';
  private lastAccountN = -1;
  private lastSequencer = '';
  private lastSequencerN = -1;
  private lastRule = '';
  private lastRuleN = -1;
  /** RESET records written. */
  private resets = 0;

  constructor(private readonly ring: RingWriter) {}

  /**
   * Writes `req`'s acceptance by `sequencer` and `rule` on chain `chainId`, accepted at `now`
   * (epoch ms) after `waited` ms: true, or false when the ring has no room for it now (nothing of
   * it taken). `TOO_BIG` for a record larger than the ring (never written).
   */
  write(chainId: number, req: ForwardRequest, sequencer: string, rule: string, now: number, waited: number): boolean | typeof TOO_BIG {
    // The reader skipped records it could not read, names among them perhaps: they go again.
    if (this.ring.skipped()) this.forget();
    // Numbered again if a RESET was written meanwhile (past MAX_NAMES): numbers from before it are unknown to the reader.
    const reset = this.resets;
    if (!this.numberAll(req.account, sequencer, rule)) return false;
    if (this.resets !== reset && !this.numberAll(req.account, sequencer, rule)) return false;
    const account = this.lastAccountN;
    const seq = this.lastSequencerN;
    const r = this.lastRuleN;
    const c = req.conditional;
    const bn = c === undefined ? '' : hexOf(c.blockNumberMax);
    const ts = c === undefined ? '' : hexOf(c.timestampMax);
    const sender = req.sender ?? '';
    const size = RingWriter.size(STRINGS + req.hash.length + req.rawHex.length + sender.length + bn.length + ts.length);
    const ring = this.ring;
    if (size > ring.cap) return TOO_BIG;
    const at = ring.begin(size);
    if (at < 0) return false;
    const f = at >> 3;
    const u = at >> 2;
    ring.f64[f + 1] = chainId;
    ring.f64[f + 2] = now;
    ring.f64[f + 3] = waited;
    ring.u32[u + 8] = account;
    ring.u32[u + 9] = seq;
    ring.u32[u + 10] = r;
    ring.u32[u + 11] = req.sender === null ? 0 : HAS_SENDER;
    ring.u32[u + 12] = req.hash.length;
    ring.u32[u + 13] = req.rawHex.length;
    ring.u32[u + 14] = sender.length;
    ring.u32[u + 15] = bn.length;
    ring.u32[u + 16] = ts.length;
    // One call per string: a join would be flattened into a copy of its own before the encoder
    // reads it, and the hash stored character by character into shared memory costs more than
    // the call (both counted with callgrind).
    let o = at + STRINGS;
    o += ring.buf.latin1Write(req.hash, o);
    o += ring.buf.latin1Write(req.rawHex, o);
    if (sender.length > 0) o += ring.buf.latin1Write(sender, o);
    if (bn.length > 0) o += ring.buf.latin1Write(bn, o);
    if (ts.length > 0) ring.buf.latin1Write(ts, o);
    ring.end(at, size, ACCEPTED);
    return true;
  }

  /** The numbers of an acceptance's names (lastAccountN, lastSequencerN, lastRuleN); false: no room for a name record. */
  private numberAll(account: string, sequencer: string, rule: string): boolean {
    if (account !== this.lastAccount || this.lastAccountN < 0) {
      const n = this.number(account);
      if (n < 0) return false;
      this.lastAccount = account;
      this.lastAccountN = n;
    }
    if (sequencer !== this.lastSequencer || this.lastSequencerN < 0) {
      const n = this.number(sequencer);
      if (n < 0) return false;
      this.lastSequencer = sequencer;
      this.lastSequencerN = n;
    }
    if (rule !== this.lastRule || this.lastRuleN < 0) {
      const n = this.number(rule);
      if (n < 0) return false;
      this.lastRule = rule;
      this.lastRuleN = n;
    }
    return true;
  }

  /** Every name numbered is forgotten: each is sent again as it is next used. */
  private forget(): void {
    this.names.clear();
    this.lastAccountN = this.lastSequencerN = this.lastRuleN = -1;
  }

  /** The number of a name, written as a name record the first time; -1: no room for that record. */
  private number(name: string): number {
    const n = this.names.get(name);
    if (n !== undefined) return n;
    if (this.names.size >= MAX_NAMES) {
      const at = this.ring.begin(8);
      if (at < 0) return -1;
      this.ring.end(at, 8, RESET);
      this.forget();
      this.resets++;
    }
    const bytes = Buffer.byteLength(name, 'utf8');
    const size = RingWriter.size(16 + bytes);
    const at = this.ring.begin(size);
    if (at < 0) return -1;
    const id = this.names.size;
    this.ring.u32[(at >> 2) + 2] = id;
    this.ring.u32[(at >> 2) + 3] = bytes;
    this.ring.buf.utf8Write(name, at + 16, bytes);
    this.ring.end(at, size, NAME);
    this.names.set(name, id);
    return id;
  }
}

/** The owner's end: one ring's records read. */
export class HandedReader {
  private names: string[] = [];

  constructor(private readonly ring: RingViews) {}

  /**
   * A name or reset record taken (true), or false: an acceptance. A reset, a name record that does
   * not read and a record of no kind this reader knows (taken, and dropped) ask the writer to send
   * its names again: a record overwritten into a reset, or out of a name, would otherwise leave
   * this reader without names the writer believes it has.
   */
  takeName(at: number, size: number, kind: number): boolean {
    if (kind === ACCEPTED) return false;
    if (kind === RESET) {
      this.names = [];
      this.ring.askAgain();
    } else if (kind === NAME) {
      const u = at >> 2;
      const id = this.ring.u32[u + 2]!;
      const bytes = this.ring.u32[u + 3]!;
      if (16 + bytes > size || id >= MAX_NAMES) this.ring.askAgain();
      else this.names[id] = this.ring.buf.utf8Slice(at + 16, at + 16 + bytes);
    } else this.ring.askAgain();
    return true;
  }

  /** The chain of the acceptance at `at`. */
  chainOf(at: number): number {
    return this.ring.f64[(at >> 3) + 1]!;
  }

  /**
   * The acceptance at `at` (of `size` bytes) read back into the forward's request and given to
   * `to`: true, or false where the record does not hold what its lengths say, or names a number
   * it was not told (the writer is then asked to send its names again). Its account, sequencer
   * and rule are this reader's one string for each (read once, from its name record). What the
   * record does not carry the request holds as empty: `reqId` '' (the request's id stays with the
   * thread that answered it), a conditional send's `json` '' (tracking reads its bounds alone),
   * `t0` absent (the wait since arrival is `waited`).
   */
  take(at: number, size: number, to: HandedSink): boolean {
    const { f64, u32, buf } = this.ring;
    const u = at >> 2;
    const account = this.names[u32[u + 8]!];
    const sequencer = this.names[u32[u + 9]!];
    const rule = this.names[u32[u + 10]!];
    const hashLen = u32[u + 12]!;
    const rawLen = u32[u + 13]!;
    const senderLen = u32[u + 14]!;
    if (account === undefined || sequencer === undefined || rule === undefined) {
      // A number never told (its name record unread): the writer sends its names again.
      this.ring.askAgain();
      return false;
    }
    if (STRINGS + hashLen + rawLen + senderLen + u32[u + 15]! + u32[u + 16]! > size) return false;
    let o = at + STRINGS;
    const hash = buf.latin1Slice(o, (o += hashLen));
    const rawHex = buf.latin1Slice(o, (o += rawLen));
    const sender = (u32[u + 11]! & HAS_SENDER) === 0 ? null : buf.latin1Slice(o, o + senderLen);
    const b = this.bounds(at);
    const req: ForwardRequest = {
      hash,
      rawHex,
      account,
      reqId: '',
      sender,
      conditional: b === undefined ? undefined : { json: '', blockNumberMax: b.blockNumberMax, timestampMax: b.timestampMax },
    };
    to.acceptedElsewhere(req, sequencer, rule, f64[(at >> 3) + 2]!, f64[(at >> 3) + 3]!);
    return true;
  }

  /** The bounds of a conditional send's acceptance at `at` (checked by `entry` first), else undefined. */
  bounds(at: number): Bounds | undefined {
    const { u32, buf } = this.ring;
    const u = at >> 2;
    const bnLen = u32[u + 15]!;
    const tsLen = u32[u + 16]!;
    if (bnLen === 0 && tsLen === 0) return undefined;
    const o = at + STRINGS + u32[u + 12]! + u32[u + 13]! + u32[u + 14]!;
    const big = (s: string): bigint | null => (/^[0-9a-f]{1,64}$/.test(s) ? BigInt(`0x${s}`) : null);
    return {
      blockNumberMax: bnLen === 0 ? null : big(buf.latin1Slice(o, o + bnLen)),
      timestampMax: tsLen === 0 ? null : big(buf.latin1Slice(o + bnLen, o + bnLen + tsLen)),
    };
  }
}
