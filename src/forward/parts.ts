/**
 * What a forward is made of: the request, the send method (its call and how its answers read),
 * and each sequencer's part in it; the rules that conclude it are attempts.ts's and resolve.ts's.
 */
// The module binding, not the global (a lazy getter on globalThis, looked up on every call).
import { performance } from 'node:perf_hooks';
import type { Exit } from '../base/errors.js';
import type { PartState, SubmissionOutcome } from '../base/reasons.js';
import type { ForwardOutcome, Reading, Rule } from './answer.js';
import type { Answer, CallTimes } from '../upstreams/upstream.js';
import type { Granted } from '../express-lane/lane.js';
import type { Sequencer } from './sequencer.js';

export interface ForwardRequest {
  readonly hash: string;
  readonly rawHex: string;
  readonly account: string;
  readonly reqId: string;
  /** The recovered sender, when a policy recovered it (for the audit line); else null. */
  readonly sender: string | null;
  /** When the request arrived (performance.now()): the start of a tracked transaction's timeline. */
  readonly t0?: number;
  /** The account's grants, for the express lane's rule (express-send.ts); absent: never wrapped. */
  readonly granted?: Granted | undefined;
  /** A conditional send's options as JSON, forwarded unchanged, and the bounds past which it can never be included (tracking's `expired`). */
  readonly conditional?: { readonly json: string; readonly blockNumberMax: bigint | null; readonly timestampMax: bigint | null } | undefined;
}

/** A send method: what a kind of send calls, how its answers read, its acceptance where a lookup or a resend establishes it. */
export interface SendMethod {
  /** The method's name in the audit line (undefined: the plain send, which is also in the forward metrics). */
  readonly name: string | undefined;
  call(seq: Sequencer, req: ForwardRequest): Promise<Answer>;
  read(a: Answer, hash: string): Reading;
  /** What an answer to a resend of the same bytes (the plain method, unless `resend` says otherwise) says. */
  readResend(a: Answer, hash: string): Reading;
  /** The resend of rule 2 (resolve.ts) where it must not be the plain method (the conditional send's: never unconditional). */
  resend?(seq: Sequencer, req: ForwardRequest, times: CallTimes): Promise<Answer>;
  /** The answer when the transaction is known to be accepted without this call's own result (a lookup, a resend). */
  knownExit(hash: string): Exit;
}

/**
 * Told a forward's conclusion once, in the continuation that reaches it (no promise of its own on
 * the common path); `failed`: the rules threw (a bug, uncertain). It never throws (a Flight).
 */
export interface Concluded {
  concluded(exit: Exit): void;
  failed(e: unknown): void;
}

/** A forward's promise (off the common path) told to `done`. */
export function told(p: Promise<Exit>, done: Concluded): void {
  p.then(
    (exit) => done.concluded(exit),
    (e: unknown) => done.failed(e),
  );
}

/** A forward's conclusion as a promise, where a caller waits on it off the hot path (the sync send, the express lane's fallback). */
export function promised(start: (done: Concluded) => void): Promise<Exit> {
  return new Promise<Exit>((concluded, failed) => start({ concluded, failed }));
}

/** What one sequencer's part in a forward came to. */
export interface Part {
  readonly seq: Sequencer;
  /** In the outcome vocabulary (reasons.ts): `uncertain` until asked again (resolve.ts), and after, if still no definite answer. */
  readonly state: PartState;
  /** What the sequencer's answer said (the audit line's `answer`, the forward metrics' `outcome` label). */
  readonly outcome: ForwardOutcome;
  /** What established an accepted or refused part; null for the others. */
  readonly rule: Rule | null;
  /** The answer this part gives, for accepted and refused. */
  readonly exit: Exit | null;
  readonly ms: number;
  readonly detail: string | undefined;
  /** not_sent: no connection was free in time (load), rather than the sequencer unreachable. */
  readonly busy: boolean;
  /** The last fault was a transport error (refused, reset): the sequencer may be down. */
  readonly transport: boolean;
}

/** Which lane carried a call: the sequencers (`plain`) or the express lane's endpoint. */
export type LaneName = 'plain' | 'express';

export interface AttemptObserver {
  /** One sequencer's part (or the lane's call) in a plain send, for the forward metrics: told as arguments, no object per part. */
  forward?(chainId: number, sequencer: string, outcome: ForwardOutcome, ms: number, lane: LaneName): void;
  /** A sequencer accepted the transaction, by this rule (`hash`, `lookup`, `resend`): told before the send answers (tracking, src/track/). */
  accepted?(chainId: number, req: ForwardRequest, sequencer: string, rule: Rule): void;
}

/** A part as concluded now (`t`: when it started). */
export function part(
  seq: Sequencer,
  state: Part['state'],
  outcome: ForwardOutcome,
  rule: Rule | null,
  exit: Exit | null,
  t: number,
  detail: string | undefined,
): Part {
  return { seq, state, outcome, rule, exit, ms: performance.now() - t, detail, busy: false, transport: false };
}

/** The common path's part (the first sequencer answers with the hash), one per chain, reused: nothing keeps it once reported. */
export class CommonPart implements Part {
  // Set by `of` before the part is read.
  seq!: Sequencer;
  readonly state = 'accepted';
  outcome: ForwardOutcome = 'accepted';
  readonly rule = 'hash';
  exit: Exit | null = null;
  ms = 0;
  detail: string | undefined = undefined;
  readonly busy = false;
  readonly transport = false;

  /** This part as `part(seq, 'accepted', outcome, 'hash', exit, t, detail)` would make it. */
  of(seq: Sequencer, outcome: ForwardOutcome, exit: Exit, t: number, detail: string | undefined): Part & { readonly exit: Exit } {
    this.seq = seq;
    this.outcome = outcome;
    this.exit = exit;
    this.ms = performance.now() - t;
    this.detail = detail;
    return this as Part & { readonly exit: Exit };
  }
}

/** The parts, a line each, for the log line of an undecided forward: the sequencer, its part's outcome (and rule), what it said. */
export function describe(parts: readonly Part[]): string[] {
  return parts.map((p) => `${p.seq.label}: ${partOutcome(p)}${p.rule === null ? '' : ` (${p.rule})`} ${p.detail ?? ''}`.trimEnd());
}

/** What a part means for the submission (the audit line's `outcome`): its answer's outcome where it has one, else its state. */
export function partOutcome(p: Part): SubmissionOutcome {
  return p.exit !== null ? p.exit.outcome : p.state;
}
