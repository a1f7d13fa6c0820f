/**
 * `txgate-client`: the spec's client flow as a library. See gate.ts for the flow and README
 * "Clients" for how to use it.
 */
export { connectTxgate, Txgate } from './gate.js';
export type { TipAddresses, TxgateOptions, WaitOptions } from './gate.js';
export type { ConditionalOptions } from './submitter.js';
export { classify, TxgateError } from './submission.js';
export type { Receipt, SubmitOutcome, SyncOutcome, WaitOutcome } from './submission.js';
export { kindOf, OUTCOMES, rpcError } from './outcomes.js';
export type { OutcomeKind, OutcomeReason, OutcomeRow } from './outcomes.js';
export type { StatusAnswer, TxStatus, TxStatusName, WatchOptions } from './status.js';
export type { TlsCause } from './tls-cause.js';
