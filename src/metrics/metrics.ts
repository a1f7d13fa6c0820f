/**
 * The service's metrics, kept off the hot path (families.ts). A scrape takes a snapshot in
 * prom-client's JSON form, so the internal listener can sum the snapshots of every worker thread
 * with prom-client's AggregatorRegistry and render the text format: one scrape shows the whole
 * process.
 */
import { type Counter, counterJSON, counters, type FastHistogram, histogramJSON, histograms } from './families.js';
import type { MetricJSON } from './json.js';
import type { ReloadResult } from '../accounts/file-store.js';
import { sequencerLabel, type Config } from '../config.js';
import type { Exit } from '../errors.js';
import { REASON_NAMES, REASONS, type Where } from '../reasons.js';
import type { ForwardEvent, ForwardObserver } from '../forward/forwarder.js';
import { FORWARD_OUTCOMES } from '../forward/answer.js';
import { SYNC_OUTCOMES, type SyncObserver, type SyncOutcome } from '../sync/sync-send.js';
import { StoreState } from '../accounts/postgres/state.js';
import { type HealthBoard, slotIndex } from '../forward/health-board.js';
import type { BaseCtx } from '../pipeline/context.js';
import { STAGE_SAMPLE_MASK, type RequestObserver } from '../pipeline/pipeline.js';
import { finished } from '../stages/list.js';
import { droppedLogLines, LOG_BUFFER_BYTES } from '../log.js';

/** The method label: a fixed set, never free text (index order is used on the hot path). */
const METHODS = ['eth_chainId', 'eth_sendRawTransaction', 'other', 'unparsed', 'eth_sendRawTransactionSync'] as const;
const SYNC_METHOD_INDEX = 4;
/** The reasons given at these stages, from the one reasons table. */
const at = (...where: Where[]) => REASON_NAMES.filter((r) => REASONS[r].stages.some((w) => where.includes(w)));
/** A method's outcomes are bound up front, derived from where each reason is given. */
const POSSIBLE: Record<(typeof METHODS)[number], readonly string[]> = {
  // Refused before the method is known.
  unparsed: at('host', 'size_cap', 'parse', 'any'),
  // Answered at the route stage: its refusals, or a failure.
  eth_chainId: ['ok', ...at('route').filter((r) => r !== 'method_not_found'), 'internal_error'],
  other: ['method_not_found'],
  // Any stage's but the host's, the parse's and the unknown-method refusal.
  eth_sendRawTransaction: submissionOutcomes(),
  // Its own series only where a chain serves it (else it is a method not served: `other`).
  eth_sendRawTransactionSync: submissionOutcomes(),
};
function submissionOutcomes(): string[] {
  return [
    'ok',
    ...REASON_NAMES.filter((r) => REASONS[r].stages.some((w) => w !== 'front_end' && w !== 'host')).filter(
      (r) => !at('parse').includes(r) && r !== 'method_not_found',
    ),
  ];
}
const OUTCOMES = FORWARD_OUTCOMES;

/** One transport's request series: by method index, by reason. */
interface TransportSeries {
  readonly transport: string;
  readonly requests: Map<string, Counter>[];
  readonly durations: Record<string, FastHistogram>[];
}

export class Metrics {
  private readonly requests = counters(
    'txgate_requests_total',
    'Requests answered on POST / (transport http) or a WebSocket frame (ws), by JSON-RPC method, HTTP status (over WebSocket: data.status) and reason (ok for a result).',
  );
  private readonly duration = histograms(
    'txgate_request_duration_seconds',
    'Time from request arrival to answer, by method, outcome (ok, rejected, upstream) and transport.',
  );
  private readonly wsOpen = counters('txgate_ws_connections', 'Open WebSocket connections.');
  private readonly wsCloses = counters(
    'txgate_ws_closes_total',
    'WebSocket connections closed, by close code (1001 drain, 1013 answers not read, 4001 key revoked; 1000/1005 by the client; 1006 without a close frame: the network, or a frame far over the body cap).',
  );
  private readonly stages = histograms(
    'txgate_stage_duration_seconds',
    `Time spent in each pipeline stage, sampled on 1 request in ${STAGE_SAMPLE_MASK + 1}, every request with profiling.serverTiming on (a stage that awaits includes its wait: body upload, forward).`,
  );
  private readonly forwards = counters('txgate_forwards_total', 'Answers from sequencers to forwarded transactions, by chain, sequencer and outcome.');
  private readonly upstream = histograms('txgate_upstream_duration_seconds', 'Sequencer answer time for eth_sendRawTransaction, by chain and sequencer.');
  private readonly inFlight = counters('txgate_forwards_in_flight', 'Forwards in flight, by chain.');
  private readonly syncCalls = counters(
    'txgate_sync_calls_total',
    'eth_sendRawTransactionSync calls answered, by chain and outcome (executed, pending: accepted without a receipt in the wait, refused, uncertain, not_sent).',
  );
  private readonly syncWait = histograms(
    'txgate_sync_wait_seconds',
    'eth_sendRawTransactionSync: time from the call to its receipt (executed calls), by chain.',
  );
  private readonly syncWaitingNow = counters('txgate_sync_waiting', 'eth_sendRawTransactionSync calls waiting now, by chain.');
  private readonly up = counters('txgate_sequencer_up', '1 when the sequencer answered its last eth_chainId probe with the chain id, else 0.');
  private readonly limited = counters('txgate_rate_limited_total', 'Submissions refused with 429, by account id.');
  private readonly reloads = counters('txgate_account_reloads_total', 'Accounts file reloads, by result (loaded, unchanged, invalid).');
  private readonly loaded = counters('txgate_accounts_loaded', 'Accounts in the snapshot in force.');
  private readonly info = counters('txgate_build_info', 'Build information (value 1).');

  /** By stage name: bound when the pipeline is built (stages), or on a stage's first sample. */
  private readonly stageChildren = new Map<string, FastHistogram>();

  private stageSeries(stage: string): FastHistogram {
    let h = this.stageChildren.get(stage);
    if (h === undefined) this.stageChildren.set(stage, (h = this.stages.child({ stage })));
    return h;
  }

  /** Some chain serves eth_sendRawTransactionSync: the method has series of its own. */
  private readonly syncServed: boolean;

  constructor(
    private readonly config: Config,
    build: { version: string; uws: string },
  ) {
    this.syncServed = config.chains.some((c) => c.sync.enabled);
    // The sync series of the chains that turned the method on, bound up front (alerts see zeros).
    for (const c of config.chains) if (c.sync.enabled) this.syncChildren(c.chainId);
    if (config.websocket.enabled) this.wsOpen.child({});
    for (const c of config.chains) {
      this.inFlight.child({ chain: c.chainId });
      for (const s of c.sequencers) {
        const sequencer = sequencerLabel(s);
        this.sequencerChildren(c.chainId, sequencer);
        this.up.child({ chain: c.chainId, sequencer });
      }
    }
    this.info.child({
      version: build.version,
      node: process.version,
      uws: build.uws,
      secp256k1: config.crypto.secp256k1,
      signature: config.crypto.signature,
    }).value = 1;
  }

  /**
   * The observer of a front end's requests, by its `transport` label (front/front-end.ts): its
   * series, the outcomes each method can have bound up front (so alerts see zeros, not gaps);
   * anything else binds on first use. The stage series are the pipeline's, whichever transport.
   */
  requestObserver(transport: string): RequestObserver {
    const series = this.bindRequests(transport);
    return {
      request: (ctx: BaseCtx, exit: Exit, _stage: string, micros: number) => this.observe(series, ctx, exit, micros),
      stage: (stage: string, ms: number) => this.stageSeries(stage).observe(ms / 1000),
      // Bound up front, as the request series: alerts see zeros, not gaps.
      stages: (names: readonly string[]) => {
        for (const n of names) this.stageSeries(n);
      },
    };
  }

  private bindRequests(transport: string): TransportSeries {
    const requests: Map<string, Counter>[] = [];
    const durations: Record<string, FastHistogram>[] = [];
    METHODS.forEach((method, i) => {
      if (i === SYNC_METHOD_INDEX && !this.syncServed) return;
      const m = new Map<string, Counter>();
      for (const reason of POSSIBLE[method]) {
        const status = reason === 'ok' ? 200 : REASONS[reason as keyof typeof REASONS].status;
        m.set(reason, this.requests.child({ method, status, reason, transport }));
      }
      requests[i] = m;
      durations[i] = {
        ok: this.duration.child({ method, outcome: 'ok', transport }),
        rejected: this.duration.child({ method, outcome: 'rejected', transport }),
        upstream: this.duration.child({ method, outcome: 'upstream', transport }),
      };
    });
    return { transport, requests, durations };
  }

  private observe(t: TransportSeries, ctx: BaseCtx, exit: Exit, micros: number): void {
    const rpc = finished(ctx).rpc;
    const mi =
      rpc === undefined
        ? 3
        : rpc.method === 'eth_chainId'
          ? 0
          : rpc.method === 'eth_sendRawTransaction'
            ? 1
            : rpc.method === 'eth_sendRawTransactionSync' && this.syncServed
              ? SYNC_METHOD_INDEX
              : 2;
    const reason = exit.reason;
    const byReason = t.requests[mi]!;
    let c = byReason.get(reason);
    if (c === undefined) {
      c = this.requests.child({ method: METHODS[mi]!, status: exit.status, reason, transport: t.transport });
      byReason.set(reason, c);
    }
    c.value++;
    const d = t.durations[mi]!;
    (reason === 'ok' ? d.ok! : reason.startsWith('upstream') ? d.upstream! : d.rejected!).observe(micros / 1e6);
    if (reason === 'rate_limited') {
      const account = finished(ctx).account;
      if (account !== undefined) {
        let c = this.limitedByAccount.get(account.id);
        if (c === undefined) this.limitedByAccount.set(account.id, (c = this.limited.child({ account: account.id })));
        c.value++;
      }
    }
  }

  /** The WebSocket lane's connections. */
  private readonly wsCloseChildren = new Map<number, Counter>();
  readonly wsLane = {
    opened: (): void => {
      this.wsOpen.child({}).value++;
    },
    closed: (code: number): void => {
      this.wsOpen.child({}).value--;
      let c = this.wsCloseChildren.get(code);
      if (c === undefined) this.wsCloseChildren.set(code, (c = this.wsCloses.child({ code })));
      c.value++;
    },
  };

  private readonly inFlightByChain = new Map<number, Counter>();
  private readonly limitedByAccount = new Map<string, Counter>();

  /** chain → sequencer → pre-bound children: a forward event builds no label string. */
  private readonly bySequencer = new Map<number, Map<string, { outcomes: Record<string, Counter>; latency: FastHistogram }>>();

  private sequencerChildren(chain: number, sequencer: string) {
    let m = this.bySequencer.get(chain);
    if (m === undefined) this.bySequencer.set(chain, (m = new Map()));
    let c = m.get(sequencer);
    if (c === undefined) {
      const outcomes: Record<string, Counter> = {};
      for (const outcome of OUTCOMES) outcomes[outcome] = this.forwards.child({ chain, sequencer, outcome });
      c = { outcomes, latency: this.upstream.child({ chain, sequencer }) };
      m.set(sequencer, c);
    }
    return c;
  }

  /** chain → the sync series of a chain with sync on (bound at start-up; none where sync is off). */
  private readonly bySyncChain = new Map<number, { outcomes: Record<string, Counter>; wait: FastHistogram; waiting: Counter }>();

  private syncChildren(chain: number) {
    let c = this.bySyncChain.get(chain);
    if (c === undefined) {
      const outcomes: Record<string, Counter> = {};
      for (const outcome of SYNC_OUTCOMES) outcomes[outcome] = this.syncCalls.child({ chain, outcome });
      c = { outcomes, wait: this.syncWait.child({ chain }), waiting: this.syncWaitingNow.child({ chain }) };
      this.bySyncChain.set(chain, c);
    }
    return c;
  }

  readonly forward: ForwardObserver & SyncObserver = {
    sync: (chainId: number, outcome: SyncOutcome, seconds: number | null) => {
      const c = this.syncChildren(chainId);
      c.outcomes[outcome]!.value++;
      if (outcome === 'executed' && seconds !== null) c.wait.observe(seconds);
    },
    syncWaiting: (chainId: number, n: number) => {
      this.syncChildren(chainId).waiting.value = n;
    },
    forward: (e: ForwardEvent) => {
      const c = this.sequencerChildren(e.chainId, e.sequencer);
      const n = c.outcomes[e.outcome];
      if (n !== undefined) n.value++;
      c.latency.observe(e.ms / 1000);
    },
    inFlight: (chainId: number, n: number) => {
      let g = this.inFlightByChain.get(chainId);
      if (g === undefined) this.inFlightByChain.set(chainId, (g = this.inFlight.child({ chain: chainId })));
      g.value = n;
    },
  };

  private board: HealthBoard | null = null;
  private accountsState: StoreState | null = null;
  private readonly storeAge = counters(
    'txgate_accounts_snapshot_age_seconds',
    'Seconds since the account snapshot was last synced with the database store (absent with the file store).',
  );
  private readonly storeUp = counters('txgate_accounts_store_up', '1 when the database account store answered its last call, else 0.');
  private readonly storeNotifications = counters('txgate_accounts_notifications_total', 'Change notifications received from the database account store.');
  private readonly storeResyncs = counters('txgate_accounts_resyncs_total', 'Periodic full resyncs of the account snapshot that succeeded.');
  private readonly storeFailures = counters('txgate_accounts_store_failures_total', 'Calls to the database account store that failed.');

  /** The database account store's shared state, read at each snapshot. */
  watchAccounts(state: StoreState): void {
    this.accountsState = state;
  }

  /** The process-wide sequencer health the `txgate_sequencer_up` gauge reads at each snapshot. */
  watchHealth(board: HealthBoard): void {
    this.board = board;
  }

  private readHealth(): void {
    const board = this.board;
    if (board === null) return;
    const slots = slotIndex(this.config.chains);
    this.config.chains.forEach((c, ci) => {
      c.sequencers.forEach((u, i) => {
        this.up.child({ chain: c.chainId, sequencer: sequencerLabel(u) }).value = board.state(slots[ci]![i]!) === 'up' ? 1 : 0;
      });
    });
  }

  readonly accountsReload = (result: ReloadResult, accounts: number): void => {
    this.reloads.child({ result }).value++;
    this.loaded.child({}).value = accounts;
  };

  /** Everything, in prom-client's getMetricsAsJSON form. */
  snapshot(): MetricJSON[] {
    this.readHealth();
    const s = this.accountsState;
    const store: MetricJSON[] = [];
    if (s !== null) {
      this.storeAge.child({}).value = Math.round(Math.min(s.ageMs(), 1e12)) / 1000;
      this.storeUp.child({}).value = s.get(StoreState.UP);
      this.storeNotifications.child({}).value = s.get(StoreState.NOTIFICATIONS);
      this.storeResyncs.child({}).value = s.get(StoreState.RESYNCS);
      this.storeFailures.child({}).value = s.get(StoreState.FAILURES);
      // One store per process: every thread reports the same values, so 'max' aggregates them.
      store.push(
        counterJSON(this.storeAge, 'max', 'gauge'),
        counterJSON(this.storeUp, 'max', 'gauge'),
        counterJSON(this.storeNotifications, 'max'),
        counterJSON(this.storeResyncs, 'max'),
        counterJSON(this.storeFailures, 'max'),
      );
    }
    return [
      ...store,
      counterJSON(this.requests),
      histogramJSON(this.duration),
      histogramJSON(this.stages),
      counterJSON(this.forwards),
      histogramJSON(this.upstream),
      counterJSON(this.inFlight, 'sum', 'gauge'),
      counterJSON(this.up, 'max', 'gauge'),
      counterJSON(this.limited),
      ...(this.config.websocket.enabled ? [counterJSON(this.wsOpen, 'sum', 'gauge'), counterJSON(this.wsCloses)] : []),
      ...(this.bySyncChain.size > 0 ? [counterJSON(this.syncCalls), histogramJSON(this.syncWait), counterJSON(this.syncWaitingNow, 'sum', 'gauge')] : []),
      counterJSON(this.reloads),
      counterJSON(this.loaded, 'max', 'gauge'),
      counterJSON(this.info, 'max', 'gauge'),
      {
        name: 'txgate_log_lines_dropped_total',
        help: `Log lines dropped because stdout could not keep up (buffer bounded at ${LOG_BUFFER_BYTES / (1 << 20)} MiB).`,
        type: 'counter',
        aggregator: 'sum',
        values: [{ labels: {}, value: droppedLogLines() }],
      },
    ];
  }
}
