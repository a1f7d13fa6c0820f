/**
 * A tracked chain as the rest of the edge uses it on any thread: the forward tells it each
 * acceptance (observe.ts), the status stage asks it a status, the WebSocket transport listens to
 * its changes. On the thread that owns the chain's tracker it is the tracker (tracker.ts);
 * elsewhere the seam's remote end (seam/remote.ts), which answers alike.
 */
import type { Exit } from '../base/errors.js';
import type { Acceptor } from './observe.js';

/** Told of every change of a tracked transaction: whose and which, and its status object (JSON text). */
export type StatusListener = (change: { readonly account: string; readonly hash: string }, status: string) => void;

export interface TrackedChain extends Acceptor {
  /** txgate_getTransactionStatus for `account`: its own entry's status, else the chain's answer. */
  status(account: string, hash: string): Exit | Promise<Exit>;
  /** Every change from now on; returns the unsubscription. */
  listen(fn: StatusListener): () => void;
}
