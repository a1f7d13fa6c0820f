/**
 * The forward's observer of a tracked chain: the chain's own observer (the metrics), and the
 * tracker told which sequencer accepted a hash by which rule. A chain without tracking keeps its
 * observer as it is (no hook: nothing added to its forwards).
 */
import type { ForwardObserver } from '../forward/forwarder.js';
import type { Tracker } from './tracker.js';

export function trackedObserver<O extends ForwardObserver>(base: O | undefined, tracker: () => Tracker | undefined): O & ForwardObserver {
  return {
    ...(base ?? ({} as O)),
    accepted: (_chainId: number, hash: string, sequencer: string, rule: string) => tracker()?.attemptAccepted(hash, sequencer, rule),
  };
}
