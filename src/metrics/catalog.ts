/**
 * The service's metric families, declared once: name, type, labels, help and what an operator
 * reads in them. The declarations build the families (family-set.ts, for metrics.ts), make each
 * thread's snapshot (in this order, with these types and aggregators) and render the metrics table in
 * docs/observability.md (scripts/docs-tables.ts); test/unit/metrics-catalog.test.ts keeps the three
 * in step.
 */
import { LOG_BUFFER_BYTES } from '../log/log.js';
import { STAGE_SAMPLE_MASK } from '../pipeline/pipeline.js';

export type FamilyType = 'counter' | 'gauge' | 'histogram';

/** Which part of the service a family belongs to: it is in a snapshot only where that part is on. */
export type Feature = 'always' | 'websocket' | 'sync' | 'store' | 'track' | 'tls' | 'expressLane' | 'flashblocks' | 'rehearsal';

export interface FamilyDecl {
  readonly name: string;
  readonly type: FamilyType;
  /** Label names, in the order a child is bound with them, each with what its values are (or '' where the name says it). */
  readonly labels: readonly (readonly [name: string, values: string])[];
  /** The HELP line. */
  readonly help: string;
  /** What the operator reads in it (the table's meaning). */
  readonly doc: string;
  /** How the threads' values combine at a scrape: summed, or the max of one process-wide value every thread reports alike. */
  readonly aggregator: 'sum' | 'max';
  readonly part: Feature;
  /** A histogram's buckets (seconds), where not the latency buckets. */
  readonly buckets?: readonly number[];
}

const family = <T extends FamilyType>(
  name: string,
  type: T,
  labels: FamilyDecl['labels'],
  help: string,
  doc: string,
  o: { aggregator?: 'sum' | 'max'; part?: Feature; buckets?: readonly number[] } = {},
): FamilyDecl & { readonly type: T } => ({
  name,
  type,
  labels,
  help,
  doc,
  aggregator: o.aggregator ?? 'sum',
  part: o.part ?? 'always',
  ...(o.buckets === undefined ? {} : { buckets: o.buckets }),
});

/** Inclusion latency buckets (seconds): a fast sequencer's block is a fraction of a second, a congested L1 minutes. */
export const INCLUSION_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 15, 30, 60, 120, 300, 600];

/** Preconfirmation latency buckets (seconds): a slice every 200 ms (Base), the stream's own delay beside it. */
export const PRECONFIRMATION_BUCKETS = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 2, 5];

/** How a rehearsal ended (txgate_rehearsals_total's `result`; src/rehearsal/). */
export const REHEARSAL_RESULTS = ['answered', 'failed'] as const;

/** Every family, in the order a snapshot lists them. */
export const METRICS = {
  storeAge: family(
    'txgate_accounts_snapshot_age_seconds',
    'gauge',
    [],
    'Seconds since the account snapshot was last synced with the database store (absent with the file store).',
    'database store: seconds since the last successful sync',
    { aggregator: 'max', part: 'store' },
  ),
  storeUp: family(
    'txgate_accounts_store_up',
    'gauge',
    [],
    '1 when the database account store answered its last call, else 0.',
    'database store: 1 when its last call succeeded',
    { aggregator: 'max', part: 'store' },
  ),
  storeNotifications: family(
    'txgate_accounts_notifications_total',
    'counter',
    [],
    'Change notifications received from the database account store.',
    'database store: change notifications',
    { aggregator: 'max', part: 'store' },
  ),
  storeResyncs: family(
    'txgate_accounts_resyncs_total',
    'counter',
    [],
    'Periodic full resyncs of the account snapshot that succeeded.',
    'database store: periodic resyncs',
    { aggregator: 'max', part: 'store' },
  ),
  storeFailures: family(
    'txgate_accounts_store_failures_total',
    'counter',
    [],
    'Calls to the database account store that failed.',
    'database store: failed calls',
    { aggregator: 'max', part: 'store' },
  ),
  requests: family(
    'txgate_requests_total',
    'counter',
    [
      [
        'method',
        '`eth_chainId`, `eth_sendRawTransaction`, `eth_sendRawTransactionSync` where a chain serves it, `txgate_getTransactionStatus` where a chain tracks, `eth_sendRawTransactionConditional` where a chain serves it, `other` (the WebSocket transport subscriptions included), `unparsed`',
      ],
      ['status', ''],
      ['reason', '`ok` or the refusal reason'],
      ['transport', '`http`: `POST /`; `ws`: a WebSocket frame, `status` its `data.status`'],
    ],
    'Requests answered on POST / (transport http) or a WebSocket frame (ws), by JSON-RPC method, HTTP status (over WebSocket: data.status) and reason (ok for a result).',
    'answers',
  ),
  duration: family(
    'txgate_request_duration_seconds',
    'histogram',
    [
      ['method', ''],
      ['outcome', '`ok`, `rejected`, `upstream`'],
      ['transport', ''],
    ],
    'Time from request arrival to answer, by method, outcome (ok, rejected, upstream) and transport.',
    'arrival to answer',
  ),
  stages: family(
    'txgate_stage_duration_seconds',
    'histogram',
    [['stage', '']],
    `Time spent in each pipeline stage, sampled on 1 request in ${STAGE_SAMPLE_MASK + 1}, every request with profiling.serverTiming on (a stage that awaits includes its wait: body upload, forward).`,
    `time in each stage, sampled on 1 request in ${STAGE_SAMPLE_MASK + 1} (a stage that awaits includes its wait: body upload, forward)`,
  ),
  forwards: family(
    'txgate_forwards_total',
    'counter',
    [
      ['chain', ''],
      ['sequencer', ''],
      ['outcome', ''],
      ['lane', '`plain` (the sequencers), `express` (the express lane endpoint, its `sequencer` label)'],
    ],
    'Answers from sequencers to forwarded transactions, by chain, sequencer, outcome and lane.',
    "sequencer answers to forwarded `eth_sendRawTransaction` (the sync receipt mode's sends included; the sync method's own calls are in `txgate_sync_calls_total`: they last until the block); `lane=\"express\"`: the express lane endpoint's, each concluded by the lookup or a refusal ([express-lane.md](express-lane.md))",
  ),
  laneControlled: family(
    'txgate_express_lane_controlled',
    'gauge',
    [['chain', '']],
    'Whether a granted submission on the chain would take the express lane now (1) or the plain path (0).',
    "1 while the edge's controller holds the round (fresh auction state, not within `marginMs` of its end), else 0",
    { aggregator: 'max', part: 'expressLane' },
  ),
  laneRound: family(
    'txgate_express_lane_round',
    'gauge',
    [['chain', '']],
    'The current express lane auction round, by chain.',
    "the auction's current round on the edge's clock",
    { aggregator: 'max', part: 'expressLane' },
  ),
  upstream: family(
    'txgate_upstream_duration_seconds',
    'histogram',
    [
      ['chain', ''],
      ['sequencer', ''],
    ],
    'Sequencer answer time for eth_sendRawTransaction, by chain and sequencer.',
    'sequencer answer time of those',
  ),
  inFlight: family('txgate_forwards_in_flight', 'gauge', [['chain', '']], 'Forwards in flight, by chain.', 'forwards in flight (bounded by `maxInFlight`)'),
  up: family(
    'txgate_sequencer_up',
    'gauge',
    [
      ['chain', ''],
      ['sequencer', ''],
    ],
    '1 when the sequencer answered its last eth_chainId probe with the chain id, else 0.',
    '1 when the last `eth_chainId` probe answered the chain id',
    { aggregator: 'max' },
  ),
  limited: family('txgate_rate_limited_total', 'counter', [['account', '']], 'Submissions refused with 429, by account id.', 'submissions refused with 429'),
  wsOpen: family('txgate_ws_connections', 'gauge', [], 'Open WebSocket connections.', 'open WebSocket connections (with `websocket.enabled`)', {
    part: 'websocket',
  }),
  wsCloses: family(
    'txgate_ws_closes_total',
    'counter',
    [['code', '']],
    'WebSocket connections closed, by close code (1001 drain, 1013 answers not read, 4001 key revoked; 1000/1005 by the client; 1006 without a close frame: the network, or a frame far over the body cap).',
    'WebSocket connections closed, by close code (1000/1005 and 1006 from the client or the network; 1001, 1013, 4001 from txgate)',
    { part: 'websocket' },
  ),
  syncCalls: family(
    'txgate_sync_calls_total',
    'counter',
    [
      ['chain', ''],
      ['outcome', ''],
    ],
    'eth_sendRawTransactionSync calls answered, by chain and outcome (the answer outcomes: accepted, with the receipt; pending: accepted without a receipt in the wait; refused; not_sent; uncertain).',
    '`eth_sendRawTransactionSync` calls answered, by the outcome of their answer: `accepted` (the receipt), `pending` (code 4), `refused`, `not_sent`, `uncertain` (only where a chain turns sync on)',
    { part: 'sync' },
  ),
  syncWait: family(
    'txgate_sync_wait_seconds',
    'histogram',
    [['chain', '']],
    'eth_sendRawTransactionSync: time from the call to its receipt (accepted calls), by chain.',
    'time from a sync call to its receipt (accepted calls)',
    { part: 'sync' },
  ),
  syncWaiting: family('txgate_sync_waiting', 'gauge', [['chain', '']], 'eth_sendRawTransactionSync calls waiting now, by chain.', 'sync calls waiting now', {
    part: 'sync',
  }),
  reloads: family(
    'txgate_account_reloads_total',
    'counter',
    [['result', '`loaded`, `unchanged`, `invalid`']],
    'Accounts file reloads, by result (loaded, unchanged, invalid).',
    'accounts file reloads',
  ),
  tlsExpiry: family(
    'txgate_tls_certificate_expiry_seconds',
    'gauge',
    [
      [
        'host',
        'the server names of a `listen.tls.hosts` entry, `*` (the default certificate, by SNI) or `(none)` (clients sending no server name: the certificate loaded at start)',
      ],
    ],
    'Unix time at which each TLS certificate in force expires, by host.',
    'when each certificate in force expires (Unix seconds); alert well before `time()` reaches it (with `listen.tls.enabled`)',
    { aggregator: 'max', part: 'tls' },
  ),
  tlsReloads: family(
    'txgate_tls_reloads_total',
    'counter',
    [['result', '`rotated`, `unchanged`, `invalid`']],
    'TLS certificate reloads (SIGHUP, file change), by result, per certificate looked at.',
    'certificate reloads; `invalid`: a new certificate refused, the one in force kept (with `listen.tls.enabled`)',
    { aggregator: 'max', part: 'tls' },
  ),
  loaded: family('txgate_accounts_loaded', 'gauge', [], 'Accounts in the snapshot in force.', 'accounts in force', { aggregator: 'max' }),
  info: family(
    'txgate_build_info',
    'gauge',
    [
      ['version', ''],
      ['node', ''],
      ['uws', ''],
      ['secp256k1', ''],
      ['signature', ''],
    ],
    'Build information (value 1).',
    '1; the native uWS binding, the libsecp256k1 (`npm` or `system`) and the signature check (`recover` or `curve`) in use',
    { aggregator: 'max' },
  ),
  logDropped: family(
    'txgate_log_lines_dropped_total',
    'counter',
    [],
    `Log lines dropped because stdout could not keep up (buffer bounded at ${LOG_BUFFER_BYTES / (1 << 20)} MiB).`,
    'log lines dropped because stdout could not keep up',
  ),
  framesIgnored: family(
    'txgate_peer_frames_ignored_total',
    'counter',
    [['source', '`sequencer` (a `ws(s)://` sequencer), `chain_rpc` (the chain RPC head subscription)']],
    'WebSocket frames from peers that answered nothing and were dropped (unknown or repeated ids, notifications, garbage), by source.',
    'frames from peers that answered nothing and were dropped (unknown or repeated ids, notifications, garbage); a steady rise is a peer speaking another protocol',
  ),
  keepWarmProbes: family(
    'txgate_sequencer_keepalive_probes_total',
    'counter',
    [['result', '`answered` (any JSON-RPC answer: the connection is proven), `failed` (no answer: the connection is reopened at a later look)']],
    'Keep-warm probes (eth_chainId) sent on idle or reopened sequencer connections, by result; never submissions, never in the forward metrics.',
    'keep-warm probes (`eth_chainId` on an idle or reopened sequencer connection, `chains[].forward.keepWarm`): about one per kept connection per `idleMs` while idle; `failed` rising while submissions succeed is a sequencer closing connections sooner than `idleMs`',
  ),
  rehearsals: family(
    'txgate_rehearsals_total',
    'counter',
    [['result', '`answered` (with its hash), `failed` (anything else: three in a row stop the rehearsals on that thread, said in the log)']],
    'Rehearsals of the submission path run while idle (rehearsal.everyMs), by result; never sent to a sequencer, never in the request metrics.',
    "rehearsals (`rehearsal.everyMs`: a submission of txgate's own through its whole path on a private port, its forward to a sink of its own): about one per `everyMs` per idle thread, none while requests flow; `failed` is a setting the rehearsal cannot pass (said once in the log)",
    { part: 'rehearsal' },
  ),
  inclusion: family(
    'txgate_inclusion_seconds',
    'histogram',
    [
      ['chain', ''],
      ['sequencer', 'the sequencer that accepted it'],
    ],
    'Tracked transactions: time from the acceptance to the edge seeing the block that includes it, by chain and sequencer.',
    'tracking: time from the acceptance (the 200) to this edge seeing the block that includes it (where `chains[].track` is on)',
    { part: 'track', buckets: INCLUSION_BUCKETS },
  ),
  trackFinal: family(
    'txgate_tracked_final_total',
    'counter',
    [
      ['chain', ''],
      ['state', '`included`, `reverted`, `replaced`, `dropped`'],
    ],
    'Tracked transactions that reached a final state, by chain and state.',
    'tracking: transactions that reached a final state (`included`, `reverted`, `replaced`, `dropped`)',
    { part: 'track' },
  ),
  trackReorged: family(
    'txgate_tracked_reorged_total',
    'counter',
    [['chain', '']],
    'Tracked transactions a reorg took out of the canonical chain (back to pending), by chain.',
    'tracking: transactions a reorg took out of the canonical chain (back to `pending`)',
    { part: 'track' },
  ),
  tracked: family(
    'txgate_tracked',
    'gauge',
    [
      ['chain', ''],
      ['state', '`pending`, `final`'],
    ],
    'Transactions in the status table now, by chain and state (pending, final).',
    'tracking: transactions in the status table now',
    { part: 'track' },
  ),
  trackEvicted: family(
    'txgate_tracked_evictions_total',
    'counter',
    [
      ['chain', ''],
      ['kind', '`final` (dropped before `keepMs` from a full table), `refused` (a full table of pending: not tracked)'],
    ],
    'Status table evictions (final entries dropped before keepMs) and refusals (a table full of pending entries), by chain.',
    'tracking: final entries evicted from a full table, and acceptances not tracked (table full of pending ones: raise `maxTracked`)',
    { part: 'track' },
  ),
  trackHead: family(
    'txgate_track_head',
    'gauge',
    [['chain', '']],
    'The last block the transaction watcher applied, by chain.',
    'tracking: the last block the watcher applied',
    {
      aggregator: 'max',
      part: 'track',
    },
  ),
  trackStalled: family(
    'txgate_track_watcher_stalled',
    'gauge',
    [['chain', '']],
    '1 while the transaction watcher of the chain is stalled (a pass not ended within stallMs, or its head more than maxLagBlocks behind the chain), else 0.',
    "tracking: 1 while the watcher is stalled (a pass not ended within `stallMs`, or its head more than `maxLagBlocks` behind the chain's); `/ready` says so",
    { aggregator: 'max', part: 'track' },
  ),
  trackRestarts: family(
    'txgate_track_watcher_restarts_total',
    'counter',
    [['chain', '']],
    'Transaction watcher restarts, by chain: a pass abandoned after stallMs, or a head more than maxLagBlocks behind the chain.',
    "tracking: watcher restarts: a pass abandoned after `stallMs`, or a head more than `maxLagBlocks` behind the chain's",
    { part: 'track' },
  ),
  preconfirmation: family(
    'txgate_preconfirmation_seconds',
    'histogram',
    [['chain', '']],
    'Tracked transactions: time from the acceptance to the edge reading the flashblock that carries it, by chain.',
    'flashblocks: time from the acceptance (the 200) to this edge reading the slice that carries the transaction (tracked chains with `chains[].flashblocks`)',
    { part: 'flashblocks', buckets: PRECONFIRMATION_BUCKETS },
  ),
  preconfirmationsLost: family(
    'txgate_preconfirmations_lost_total',
    'counter',
    [['chain', '']],
    'Preconfirmed tracked transactions the sealed block of their number left out (back to pending), by chain.',
    'flashblocks: preconfirmed transactions the sealed block of their number left out (back to `pending`): rare, and each one a preconfirmation a desk may have acted on',
    { part: 'flashblocks' },
  ),
  flashblocksConnected: family(
    'txgate_flashblocks_connected',
    'gauge',
    [['chain', '']],
    '1 while a thread of the process holds the chain flashblocks stream open, else 0.',
    'flashblocks: 1 while the stream is connected (on any thread that reads it)',
    { aggregator: 'max', part: 'flashblocks' },
  ),
  flashblocksStalled: family(
    'txgate_flashblocks_stalled',
    'gauge',
    [['chain', '']],
    '1 while a thread reading the chain flashblocks stream had no slice for stallMs (connected or not), else 0.',
    'flashblocks: 1 while the stream sent no slice for `flashblocks.stallMs` (or is not connected); `/ready` says so; outcomes then come from the sealed blocks',
    { aggregator: 'max', part: 'flashblocks' },
  ),
  flashblocksFrames: family(
    'txgate_flashblocks_frames_total',
    'counter',
    [
      ['chain', ''],
      [
        'kind',
        '`read`, `gap` (read; slices before it missed), `garbage` (not JSON, not a slice, not Brotli), `too_big` (past `maxFrameBytes`), `unknown_payload`, `out_of_order`, `stray_receipt` (a receipt for a hash the slice does not carry), `dropped` (64 frames waiting)',
      ],
    ],
    'Frames of the chain flashblocks stream, by what they came to.',
    'flashblocks: frames of the stream by what they came to; anything but `read` is counted and never read',
    { part: 'flashblocks' },
  ),
  flashblocksReconnects: family(
    'txgate_flashblocks_reconnects_total',
    'counter',
    [['chain', '']],
    'Connections to the chain flashblocks stream opened again (a loss, a refusal, a stall).',
    'flashblocks: the stream opened again after a loss, a refusal or a stall (0.1 s doubling to 5 s)',
    { part: 'flashblocks' },
  ),
} as const satisfies Record<string, FamilyDecl>;

/** Families not declared here that the internal listener adds (prom-client's process metrics). */
const EXTERNAL_ROWS = ['| `txgate_process_*`, `txgate_nodejs_*` | | | process CPU, memory, event-loop lag, GC (prom-client defaults) |'];

/** The metrics table (docs/observability.md), a row per family in declaration order. */
export function renderMetricsTable(): string {
  const code = (s: string) => `\`${s}\``;
  const rows = Object.values(METRICS).map((f: FamilyDecl) => {
    const labels = f.labels.map(([name, values]) => (values === '' ? code(name) : `${code(name)} (${values})`)).join(', ');
    return `| ${code(f.name)} | ${f.type} | ${labels} | ${f.doc} |`;
  });
  return ['| metric | type | labels | meaning |', '|---|---|---|---|', ...rows, ...EXTERNAL_ROWS].join('\n');
}
