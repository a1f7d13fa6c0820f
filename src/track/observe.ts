/**
 * The forward's observer of a tracked chain: the chain's own observer (the metrics), and the
 * tracker told of each acceptance where it is decided (forward/attempts.ts), with the sequencer
 * and the rule; the plain send's and the sync send's alike (they share the outcome rules). A chain without tracking keeps its
 * observer as it is (no hook: nothing added to its forwards).
 */
import type { ForwardObserver } from '../forward/forwarder.js';
import type { ForwardRequest } from '../forward/parts.js';

/** Told of each acceptance: the tracker, or on a thread that does not own it, its hand-off (seam/remote.ts). */
export interface Acceptor {
  accepted(req: ForwardRequest, sequencer: string, rule: string): void;
}

export function trackedObserver<O extends ForwardObserver>(base: O | undefined, tracker: () => Acceptor | undefined): O & ForwardObserver {
  return {
    ...(base ?? ({} as O)),
    accepted: (_chainId: number, req: ForwardRequest, sequencer: string, rule: string) => tracker()?.accepted(req, sequencer, rule),
  };
}
