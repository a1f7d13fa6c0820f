/**
 * The JSON-RPC methods txgate answers, sends and reads, each named once. The request read
 * (rpc-scan.ts) hands back these very strings for the methods served, so a comparison with one
 * of them is the engine's identity check.
 */

/** A signed transaction, answered with its hash (served, and forwarded to the sequencers). */
export const SEND_METHOD = 'eth_sendRawTransaction';
/** A signed transaction, answered with its receipt (EIP-7966; served where a chain turns it on). */
export const SYNC_METHOD = 'eth_sendRawTransactionSync';
/** A signed transaction with its inclusion conditions (ERC-7796; served where a chain turns it on, src/conditional/). */
export const CONDITIONAL_METHOD = 'eth_sendRawTransactionConditional';
/** A transaction's status on a tracked chain (src/track/; served where a chain turns tracking on). */
export const STATUS_METHOD = 'txgate_getTransactionStatus';
/** The WebSocket transport's subscriptions to pushed status changes (src/ws/subscriptions.ts). */
export const STATUS_SUBSCRIBE_METHOD = 'txgate_subscribe';
export const STATUS_UNSUBSCRIBE_METHOD = 'txgate_unsubscribe';
/** The chain id (served from configuration; the prober asks the sequencers). */
export const CHAIN_ID_METHOD = 'eth_chainId';
/** The lookup that confirms an acceptance (asked of the sequencers and the chain RPC). */
export const LOOKUP_METHOD = 'eth_getTransactionByHash';
/** A receipt (asked of the chain RPC by the sync send's receipt mode). */
export const RECEIPT_METHOD = 'eth_getTransactionReceipt';
/** A block, and an account's nonce (asked of the chain RPC by the tracker, src/track/). */
export const BLOCK_METHOD = 'eth_getBlockByNumber';
export const NONCE_METHOD = 'eth_getTransactionCount';
/** The chain RPC's head subscription, and its notifications. */
export const SUBSCRIBE_METHOD = 'eth_subscribe';
export const SUBSCRIPTION_METHOD = 'eth_subscription';
