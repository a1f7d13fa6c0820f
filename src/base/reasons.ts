/**
 * The one table of expected outcomes: reason → JSON-RPC code → HTTP status → message, with the
 * stage that gives each reason and what a client should do about it (docs/clients.md's table is
 * rendered from it by `npm run readme`, and a test fails when the two differ). A new reason is one row here.
 *
 * `data.reason` is the stable machine contract (docs/design.md §4.1); `message` is for people. Codes:
 * JSON-RPC 2.0 (-32700 … -32603) and EIP-1474 (-32000 invalid input, -32002 resource
 * unavailable, -32003 transaction rejected, -32005 limit exceeded).
 */
/**
 * Where a reason is given: a stage (by name: stages/list.ts checks at compile time that every
 * name here is one of its stages), 'front_end' before any stage, or 'any' point.
 */
export type Where = string;

/**
 * What an answer means for the submission, which decides what a client may do next (and names
 * the request's log line): `accepted` (the sequencer took it), `refused` (final for these bytes),
 * `not_sent` (nothing reached a sequencer), `uncertain` (it may have), `pending` (accepted, no
 * receipt within the sync wait).
 */
export const SUBMISSION_OUTCOMES = ['accepted', 'refused', 'not_sent', 'uncertain', 'pending'] as const;
export type SubmissionOutcome = (typeof SUBMISSION_OUTCOMES)[number];

/**
 * What one sequencer's part in a forward came to, in the same words: `accepted`, `refused`,
 * `not_sent`, or `uncertain` (written, no definite answer: asked again before it stands,
 * docs/design.md §5.4). The audit line's `outcome` is a part's answer's outcome where it has one
 * (`Exit.outcome`: a sync part accepted without its receipt is `pending`), else this.
 */
export type PartState = Exclude<SubmissionOutcome, 'pending'>;

/**
 * A part's place in its forward's answer (the audit line's `role`), not an outcome: `final` (a
 * part the answer was decided on), `winner` (fanout: the acceptance that answered), `loser`
 * (settled after another sequencer's acceptance had answered), `pending` (fanout: settled, no
 * acceptance, while others were still out: the answer waited for them). The role `pending` is
 * not the outcome `pending`.
 */
export type Role = 'final' | 'winner' | 'loser' | 'pending';

/**
 * The retry rules, each stated once: every reason names one (`retry`), and the README's retry
 * table, Errors table and client kit table are rendered from here (`npm run readme`).
 */
export const RETRY = {
  done: {
    outcome: 'accepted',
    rule: 'Done: the sequencer took it (the result is its hash, or the receipt for the sync send). Read the receipt on the chain RPC; never resend.',
  },
  fix: {
    outcome: 'refused',
    rule: 'Final for these bytes: the same request gets the same answer. Fix what the reason names (the request, the key, the grant, or a new transaction) before sending again.',
  },
  wait: {
    outcome: 'not_sent',
    rule: 'Not sent. Resend the same bytes after `Retry-After` (`data.retryAfterMs`) plus up to 20% jitter, within your deadline and allowance.',
  },
  backoff: {
    outcome: 'not_sent',
    rule: 'Not sent: nothing reached a sequencer. Resend the same bytes after a backoff with jitter (100 ms doubling to 2 s), until your deadline; another edge may answer.',
  },
  receipt: {
    outcome: 'uncertain',
    rule: 'Uncertain: it may have reached a sequencer. Look up the receipt of your locally computed hash (`data.txHash`); while there is none, resend only the same bytes, a bounded number of times.',
  },
  lookup: {
    outcome: 'pending',
    rule: 'Accepted, not lost: look up the receipt of `data.txHash`; never send other bytes for it.',
  },
} as const satisfies Record<string, { readonly outcome: SubmissionOutcome; readonly rule: string }>;

export type RetryRule = keyof typeof RETRY;

export interface ReasonSpec {
  /** The stages that give it (the reasons table's "where" column is rendered from this). */
  readonly stages: readonly Where[];
  /** When or how those stages give it, where that needs saying (the "where" column, in parentheses). */
  readonly when?: string;
  readonly status: number;
  readonly code: number;
  readonly message: string;
  /** What a client should do about it beside the retry rule (rendered into the reasons table of docs/clients.md; a test keeps them in sync). */
  readonly action: string;
  /** Whether and how the same bytes may go again (RETRY): the one rule for this reason. */
  readonly retry: RetryRule;
}

export const REASONS = {
  not_found: {
    stages: ['front_end'],
    status: 404,
    code: -32601,
    message: 'Not found: only POST /, GET /tip-addresses, GET /health and GET /ready exist',
    action: 'Use one of the documented paths.',
    retry: 'fix',
  },
  method_not_allowed: {
    stages: ['front_end'],
    status: 405,
    code: -32600,
    message: 'HTTP method not allowed on this path',
    action:
      'Use POST for / and GET for the other paths. A WebSocket upgrade where the transport is off gets it with `data.setting` `websocket.enabled`: use an http(s):// URL.',
    retry: 'fix',
  },
  bad_framing: {
    stages: ['front_end'],
    status: 400,
    code: -32600,
    message: 'Ambiguous or unsupported message framing: send one Content-Length, or Transfer-Encoding: chunked alone',
    action: 'Send one Content-Length of digits (or Transfer-Encoding: chunked alone); the connection is closed. A proxy in front must normalise framing.',
    retry: 'fix',
  },
  duplicate_header: {
    stages: ['front_end'],
    when: 'two Host or two X-Api-Key header lines',
    status: 400,
    code: -32600,
    message: 'Host and X-Api-Key must each appear once',
    action: 'Send each of Host and X-Api-Key once; the connection is closed. A proxy in front must not add a second.',
    retry: 'fix',
  },
  websocket_version: {
    stages: ['front_end'],
    when: 'a WebSocket upgrade',
    status: 426,
    code: -32600,
    message: 'Unsupported WebSocket version: only 13 (RFC 6455)',
    action: 'Upgrade with Sec-WebSocket-Version: 13 (every current client library does).',
    retry: 'fix',
  },
  misdirected_host: {
    stages: ['host'],
    status: 421,
    code: -32600,
    message: 'Host is not assigned to this service',
    action: 'Use the exact hostname assigned at onboarding.',
    retry: 'fix',
  },
  payload_too_large: {
    stages: ['front_end', 'size_cap', 'route'],
    when: 'front end: a WebSocket frame over the cap; size cap: no API key on a body over 512 bytes (declared: refused unread)',
    status: 413,
    code: -32600,
    message: 'Request body exceeds the size limit',
    action:
      'Send one transaction per request; eth_chainId bodies must fit in 512 bytes. Do not batch. Over the body cap, the message and `data.limitBytes` give the cap and `data.setting` its setting (`limits.maxBodyBytes`).',
    retry: 'fix',
  },
  unsupported_content_type: {
    stages: ['parse'],
    status: 400,
    code: -32600,
    message: 'Content-Type must be application/json',
    action: 'Send the header Content-Type: application/json.',
    retry: 'fix',
  },
  parse_error: {
    stages: ['parse'],
    status: 400,
    code: -32700,
    message: 'Parse error: body is not valid JSON',
    action: 'Send one valid UTF-8 JSON object.',
    retry: 'fix',
  },
  invalid_request: {
    stages: ['parse'],
    status: 400,
    code: -32600,
    message: 'Invalid request: expected {"jsonrpc":"2.0","id":<number|string>,"method":<string>,"params":[...]}',
    action: 'Fix the envelope: jsonrpc "2.0", a non-null id, a string method, an array params.',
    retry: 'fix',
  },
  batch_not_supported: {
    stages: ['parse'],
    status: 400,
    code: -32600,
    message: 'Batch requests are not supported: send one JSON-RPC object per POST',
    action: 'Send each request in its own POST (keep the connection alive).',
    retry: 'fix',
  },
  method_not_found: {
    stages: ['route'],
    status: 400,
    code: -32601,
    message: 'Method not supported: eth_chainId and eth_sendRawTransaction are served here (eth_sendRawTransactionSync where the chain turns it on)',
    action: 'Send chain-state queries (nonce, gas, receipts) to the chain RPC, not here.',
    retry: 'fix',
  },
  invalid_params: {
    stages: ['front_end', 'route', 'conditions', 'decode'],
    when: 'front end: `txgate_subscribe` / `txgate_unsubscribe` on the WebSocket transport',
    status: 400,
    code: -32602,
    message: 'Invalid params',
    action:
      'eth_chainId takes []; eth_sendRawTransaction takes exactly one 0x-prefixed hex string; eth_sendRawTransactionSync takes that string, then optionally a timeout in ms; txgate_getTransactionStatus takes one transaction hash; eth_sendRawTransactionConditional takes the hex string and its options, whose shapes and ranges are checked.',
    retry: 'fix',
  },
  credentials_stale: {
    stages: ['size_cap', 'auth'],
    when: 'a database store cut off longer than `maxStaleMs`',
    status: 503,
    code: -32002,
    message: "This edge's account data is stale (its account store has been unreachable too long); the transaction was not forwarded",
    action: "This edge's account store has been out of reach too long; another edge may answer.",
    retry: 'backoff',
  },
  unauthorized: {
    stages: ['size_cap', 'auth'],
    when: 'size cap: a key that does not authenticate on a body over 512 bytes (declared: refused unread)',
    status: 401,
    code: -32000,
    message: 'Missing, invalid or revoked API key (X-Api-Key)',
    action: 'Check the X-Api-Key header and the assigned hostname; contact support if it persists.',
    retry: 'fix',
  },
  submission_disabled: {
    stages: ['grant'],
    status: 403,
    code: -32003,
    message: 'Submission is disabled for this account',
    action: 'Contact support to confirm the entitlement.',
    retry: 'fix',
  },
  chain_not_granted: {
    stages: ['grant'],
    status: 403,
    code: -32003,
    message: "This account is not granted the host's chain",
    action: 'Use the endpoint of a chain the account is granted, or ask for the grant.',
    retry: 'fix',
  },
  solana_transaction: {
    stages: ['decode'],
    status: 400,
    code: -32000,
    message: 'Solana wire transactions are not accepted: send a signed EVM transaction',
    action: 'Send a signed EIP-1559 EVM transaction as 0x-hex.',
    retry: 'fix',
  },
  unsigned_transaction: {
    stages: ['decode'],
    status: 400,
    code: -32000,
    message: 'Unsigned transaction: sign it locally and send the raw signed bytes',
    action: 'Sign locally and send the signed RLP as 0x-hex (eth_sendTransaction objects are not accepted).',
    retry: 'fix',
  },
  replay_unprotected: {
    stages: ['decode'],
    status: 400,
    code: -32000,
    message: 'Legacy transaction without EIP-155 replay protection',
    action: 'Sign with the chain id (EIP-155), or better, as an EIP-1559 (0x02) transaction.',
    retry: 'fix',
  },
  unsupported_tx_type: {
    stages: ['decode'],
    status: 400,
    code: -32000,
    message: 'Transaction type not accepted for this account',
    action: 'Send an EIP-1559 (0x02) transaction, or ask for the envelope to be validated for the account.',
    retry: 'fix',
  },
  chain_mismatch: {
    stages: ['decode'],
    status: 400,
    code: -32000,
    message: "Transaction chain id does not match the host's chain",
    action:
      "Sign for the chain that eth_chainId on this host returns; the message and `data` name both ids (`chainId` the host's, `txChainId` the one signed for).",
    retry: 'fix',
  },
  invalid_signature: {
    stages: ['decode', 'sender'],
    status: 400,
    code: -32000,
    message: 'Invalid signature',
    action: 'Re-sign the transaction (low-s, valid recovery id).',
    retry: 'fix',
  },
  invalid_transaction: {
    stages: ['decode'],
    status: 400,
    code: -32000,
    message: 'Invalid transaction',
    action: 'Fix the transaction as the message says.',
    retry: 'fix',
  },
  sync_not_granted: {
    stages: ['grant'],
    status: 403,
    code: -32003,
    message: 'eth_sendRawTransactionSync is not granted to this account on this chain',
    action: 'Use eth_sendRawTransaction and poll the receipt, or ask for the sync grant.',
    retry: 'fix',
  },
  conditional_not_granted: {
    stages: ['grant'],
    status: 403,
    code: -32003,
    message: 'eth_sendRawTransactionConditional is not granted to this account on this chain',
    action: 'Use eth_sendRawTransaction (without conditions), or ask for the conditional grant.',
    retry: 'fix',
  },
  conditions_too_costly: {
    stages: ['conditions'],
    status: 400,
    code: -32005,
    message: "Limit exceeded: the conditions cost more than the chain's cap",
    action: 'Fewer `knownAccounts` entries and slots (1 per account, 1 per root or slot, 1 per range; `data.maxCost` is the cap).',
    retry: 'fix',
  },
  conditions_expired: {
    stages: ['conditions'],
    status: 400,
    code: -32003,
    message: "Transaction rejected: the chain's head is past the conditions' blockNumberMax or timestampMax",
    action: 'The quote can never be included (`data.bound` names the bound, `data.head` the head): sign a new one with bounds ahead of the chain.',
    retry: 'fix',
  },
  fee_rejected: {
    stages: ['fee'],
    status: 402,
    code: -32003,
    message: 'Fee admission rejected: the transaction does not pay an approved tip (see GET /tip-addresses)',
    action: 'Read GET /tip-addresses and pay at least minTipWei to a listed address through an approved pattern.',
    retry: 'fix',
  },
  sender_not_allowed: {
    stages: ['sender'],
    status: 403,
    code: -32003,
    message: "The transaction's sender is not on this grant's sender allow-list",
    action: 'Sign with an address the grant lists (GET /tip-addresses says whether a list applies).',
    retry: 'fix',
  },
  rate_limited: {
    stages: ['rate_limit'],
    status: 429,
    code: -32005,
    message: 'Rate limit reached for this account and chain',
    action: "The account's allowance on this chain is spent for now (error.data: retryAfterMs, perSecond, burst).",
    retry: 'wait',
  },
  upstream_rejected: {
    stages: ['forward'],
    status: 200,
    code: -32003,
    message: 'Sequencer rejected the transaction',
    action:
      "The sequencer refused it (its code and message are passed through): the nonce, fees or balance. Its -32601 (it does not serve the method) carries `data.from` `sequencer` and `data.detail`: the chain's sequencer lacks the method, not txgate.",
    retry: 'fix',
  },
  upstream_error: {
    stages: ['forward'],
    status: 502,
    code: -32603,
    message: 'Sequencer failed to give a definite answer: the outcome is uncertain',
    action: 'Written to a sequencer, no definite answer came back (timeout, 5xx, a lost connection, not JSON-RPC, another hash).',
    retry: 'receipt',
  },
  upstream_unavailable: {
    stages: ['forward'],
    status: 503,
    code: -32002,
    message: 'No healthy sequencer for this chain',
    action: 'No sequencer of the chain is healthy, or none could be connected to.',
    retry: 'backoff',
  },
  sync_timeout: {
    stages: ['forward'],
    status: 202,
    code: 4,
    message: 'The transaction was accepted; no receipt within the wait',
    action: 'The sequencer accepted it; the receipt did not come within the wait.',
    retry: 'lookup',
  },
  chain_unavailable: {
    stages: ['status'],
    when: '`txgate_getTransactionStatus` of a hash this edge does not track for the account: the chain RPC did not answer',
    status: 503,
    code: -32002,
    message: 'The chain RPC did not answer: the status could not be read',
    action:
      'A status query: the chain RPC could not be read for a hash this edge does not track for the account. The edge that accepted the transaction answers from its own table.',
    retry: 'backoff',
  },
  overloaded: {
    stages: ['front_end', 'size_cap', 'forward'],
    when: 'front end: a WebSocket connection at `maxInFlight`, or its answers unread; size cap: the process-wide body budget spent, refused unread',
    status: 503,
    code: -32005,
    message: 'Too many submissions in flight; the transaction was not forwarded',
    action: 'Too many in flight for the chain (or no connection free within queueMs). Over WebSocket: fewer in flight on the connection, and read its answers.',
    retry: 'backoff',
  },
  too_many_connections: {
    stages: ['front_end'],
    when: 'a WebSocket upgrade',
    status: 429,
    code: -32005,
    message: 'Too many open WebSocket connections for this account',
    action:
      'Close a connection before opening another: one connection carries many submissions in flight. The message and `data.limit` give the cap (`websocket.maxConnectionsPerAccount`).',
    retry: 'backoff',
  },
  draining: {
    stages: ['front_end'],
    when: 'WebSocket, while the edge stops',
    status: 503,
    code: -32002,
    message: 'The service is shutting down; the request was not processed',
    action: 'This edge is stopping: reconnect (another edge takes it).',
    retry: 'backoff',
  },
  not_ready: {
    stages: ['size_cap', 'auth'],
    when: 'accounts not loaded',
    status: 503,
    code: -32002,
    message: 'Service is not ready',
    action: 'GET /ready says what is missing.',
    retry: 'backoff',
  },
  client_closed: {
    stages: ['any'],
    when: 'never sent',
    status: 499,
    code: -32603,
    message: 'Client closed the connection before the answer',
    action: 'The client had gone before its answer; logged and counted, nothing forwarded.',
    retry: 'backoff',
  },
  internal_error: {
    stages: ['any'],
    status: 500,
    code: -32603,
    message: 'Internal error',
    action: 'A bug: report it with the X-Request-Id if it persists.',
    retry: 'receipt',
  },
} as const satisfies Record<string, ReasonSpec>;

export type Reason = keyof typeof REASONS;

/** The outcome an answer with this reason (or `ok`: a result) is, by its retry rule. */
export function outcomeOf(reason: string): SubmissionOutcome {
  if (reason === 'ok') return 'accepted';
  const spec = (REASONS as Record<string, ReasonSpec>)[reason];
  return spec === undefined ? 'uncertain' : RETRY[spec.retry].outcome;
}
/** What an answer's `reason` is: a rejection of the table, or `ok` for a result. */
export type ExitLabel = Reason | 'ok';
export const REASON_NAMES = Object.freeze(Object.keys(REASONS) as Reason[]);
