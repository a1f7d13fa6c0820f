/**
 * `txgate-client`: the spec's client flow as a library. See gate.ts for the flow and README
 * "Clients" for how to use it.
 */
export { classify, connectTxgate, Txgate, TxgateError } from './gate.js';
export type { Receipt, SubmitOutcome, SyncOutcome, TipAddresses, TxgateOptions, WaitOptions, WaitOutcome } from './gate.js';
export { kindOf, OUTCOMES, rpcError } from './outcomes.js';
export type { OutcomeKind, OutcomeReason, OutcomeRow } from './outcomes.js';
export type { StatusAnswer, TxStatus, TxStatusName, WatchOptions } from './status.js';
