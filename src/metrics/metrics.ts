/**
 * The service's metrics, kept off the hot path (families.ts), each family declared once
 * (catalog.ts), fed by the observers here. A scrape takes a snapshot in
 * prom-client's JSON form, so the internal listener can sum the snapshots of every worker thread
 * with prom-client's AggregatorRegistry and render the text format: one scrape shows the whole
 * process.
 */
import { METRICS, REHEARSAL_RESULTS, type Feature } from './catalog.js';
import { buildFamilies, familyJSON } from './family-set.js';
import type { Counter, FastHistogram } from './families.js';
import type { MetricJSON } from './json.js';
import type { ReloadResult, StoreSync } from '../accounts/types.js';
import type { Config } from '../config/config.js';
import { SUBMISSION_OUTCOMES, type SubmissionOutcome } from '../base/reasons.js';
import type { ForwardObserver } from '../forward/forwarder.js';
import type { LaneName } from '../forward/parts.js';
import type { ExpressLanesRef } from '../forward/express-send.js';
import { FORWARD_OUTCOMES, type ForwardOutcome } from '../forward/answer.js';
import type { SyncObserver } from '../sync/sync-send.js';
import type { HealthBoard } from '../health/board.js';
import { slotIndex } from '../forward/chain-link.js';
import type { RequestObserver } from '../pipeline/pipeline.js';
import { droppedLogLines } from '../log/log.js';
import { IGNORED_FRAME_SOURCES, ignoredFrames } from '../upstreams/peer-frames.js';
import { keepWarmProbes, PROBE_RESULTS } from '../upstreams/keep-warm.js';
import { upstreamLabel } from '../upstreams/upstream.js';
import type { TrackObserver } from '../track/tracker.js';
import type { TrackView } from '../track/watch-state.js';
import { RequestMetrics } from './requests.js';
import { TrackMetrics } from './track.js';
import { FRAME_KINDS, type FlashblocksStream, type FrameKind } from '../flashblocks/stream.js';
import type { TlsObserver } from '../tls/edge.js';

const OUTCOMES = FORWARD_OUTCOMES;

export class Metrics {
  /** Every family, built from its declaration (catalog.ts). */
  private readonly f = buildFamilies(METRICS);

  /** Some chain serves eth_sendRawTransactionSync: the method has series of its own. */
  private readonly syncServed: boolean;
  /** Some chain tracks its transactions: txgate_getTransactionStatus has series of its own. */
  private readonly statusServed: boolean;
  /** Some chain enables the express lane: its gauges are in a snapshot. */
  private readonly lanesOn: boolean;
  /** The front ends' request series and the pipeline's stage series. */
  private readonly requests: RequestMetrics;

  constructor(
    private readonly config: Config,
    build: { version: string; uws: string },
  ) {
    this.syncServed = config.chains.some((c) => c.sync.enabled);
    this.statusServed = config.chains.some((c) => c.track.enabled);
    this.lanesOn = config.chains.some((c) => c.expressLane.enabled);
    this.requests = new RequestMetrics(
      this.f,
      this.syncServed,
      this.statusServed,
      config.chains.some((c) => c.conditional.enabled),
    );
    // The sync series of the chains that turned the method on, bound up front (alerts see zeros).
    for (const c of config.chains) if (c.sync.enabled) this.syncChildren(c.chainId);
    if (config.websocket.enabled) this.f.wsOpen.child({});
    this.tracking.bind(config.chains.filter((c) => c.track.enabled));
    for (const c of config.chains) if (c.flashblocks.enabled) this.flashblocksChildren(c.chainId);
    if (config.listen.tls.enabled) for (const result of ['rotated', 'unchanged', 'invalid']) this.f.tlsReloads.child({ result });
    for (const c of config.chains) {
      this.f.inFlight.child({ chain: c.chainId });
      if (c.expressLane.enabled) {
        this.f.laneControlled.child({ chain: c.chainId });
        this.f.laneRound.child({ chain: c.chainId });
      }
      for (const s of c.sequencers) {
        const sequencer = upstreamLabel(s);
        this.sequencerChildren(c.chainId, sequencer);
        this.f.up.child({ chain: c.chainId, sequencer });
      }
    }
    this.f.info.child({
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
   * anything else binds on first use (requests.ts).
   */
  requestObserver(transport: string): RequestObserver {
    return this.requests.observer(transport);
  }

  /** The WebSocket transport's connections. */
  private readonly wsCloseChildren = new Map<number, Counter>();
  readonly wsTransport = {
    opened: (): void => {
      this.f.wsOpen.child({}).value++;
    },
    closed: (code: number): void => {
      this.f.wsOpen.child({}).value--;
      let c = this.wsCloseChildren.get(code);
      if (c === undefined) this.wsCloseChildren.set(code, (c = this.f.wsCloses.child({ code })));
      c.value++;
    },
  };

  private readonly inFlightByChain = new Map<number, Counter>();

  /** chain → sequencer → pre-bound children: a forward event builds no label string (the express lane's endpoint: its own map). */
  private readonly bySequencer = new Map<number, Map<string, { outcomes: Record<string, Counter>; latency: FastHistogram }>>();
  private readonly byExpressEndpoint = new Map<number, Map<string, { outcomes: Record<string, Counter>; latency: FastHistogram }>>();

  private sequencerChildren(chain: number, sequencer: string, lane: 'plain' | 'express' = 'plain') {
    const by = lane === 'plain' ? this.bySequencer : this.byExpressEndpoint;
    let m = by.get(chain);
    if (m === undefined) by.set(chain, (m = new Map()));
    let c = m.get(sequencer);
    if (c === undefined) {
      const outcomes: Record<string, Counter> = {};
      for (const outcome of OUTCOMES) outcomes[outcome] = this.f.forwards.child({ chain, sequencer, outcome, lane });
      c = { outcomes, latency: this.f.upstream.child({ chain, sequencer }) };
      m.set(sequencer, c);
    }
    return c;
  }

  private lanes: ExpressLanesRef | null = null;
  /** The express lanes the `txgate_express_lane_*` gauges read at each snapshot. */
  watchLanes(box: ExpressLanesRef): void {
    this.lanes = box;
  }

  private readLanes(): void {
    if (this.lanes === null) return;
    for (const [chain, s] of this.lanes.lanes.status()) {
      this.f.laneControlled.child({ chain }).value = s.controlled ? 1 : 0;
      this.f.laneRound.child({ chain }).value = s.round;
    }
  }

  /** chain → the sync series of a chain with sync on (bound at start-up; none where sync is off). */
  private readonly bySyncChain = new Map<number, { outcomes: Record<string, Counter>; wait: FastHistogram; waiting: Counter }>();

  private syncChildren(chain: number) {
    let c = this.bySyncChain.get(chain);
    if (c === undefined) {
      const outcomes: Record<string, Counter> = {};
      for (const outcome of SUBMISSION_OUTCOMES) outcomes[outcome] = this.f.syncCalls.child({ chain, outcome });
      c = { outcomes, wait: this.f.syncWait.child({ chain }), waiting: this.f.syncWaiting.child({ chain }) };
      this.bySyncChain.set(chain, c);
    }
    return c;
  }

  readonly forward: ForwardObserver & SyncObserver = {
    sync: (chainId: number, outcome: SubmissionOutcome, seconds: number | null) => {
      const c = this.syncChildren(chainId);
      c.outcomes[outcome]!.value++;
      if (outcome === 'accepted' && seconds !== null) c.wait.observe(seconds);
    },
    syncWaiting: (chainId: number, n: number) => {
      this.syncChildren(chainId).waiting.value = n;
    },
    forward: (chainId: number, sequencer: string, outcome: ForwardOutcome, ms: number, lane: LaneName) => {
      const c = this.sequencerChildren(chainId, sequencer, lane);
      const n = c.outcomes[outcome];
      if (n !== undefined) n.value++;
      c.latency.observe(ms / 1000);
    },
    inFlight: (chainId: number, n: number) => {
      let g = this.inFlightByChain.get(chainId);
      if (g === undefined) this.inFlightByChain.set(chainId, (g = this.f.inFlight.child({ chain: chainId })));
      g.value = n;
    },
  };

  /** The tracking series (chains with `track.enabled`). */
  private readonly tracking = new TrackMetrics(this.f);
  readonly track: TrackObserver = this.tracking.observer;

  /** The chains' trackers, read at each snapshot. */
  watchTrackers(trackers: ReadonlyMap<number, TrackView>): void {
    this.tracking.watch(trackers);
  }

  private streams: ReadonlyMap<number, FlashblocksStream> = new Map();
  /** The chains' flashblocks streams on this thread, read at each snapshot. */
  /** This thread's rehearsal counts (src/rehearsal/), read at a scrape. */
  watchRehearsal(counts: Readonly<Record<(typeof REHEARSAL_RESULTS)[number], number>>): void {
    this.rehearsals = counts;
  }

  private rehearsals: Readonly<Record<(typeof REHEARSAL_RESULTS)[number], number>> | null = null;

  watchFlashblocks(streams: ReadonlyMap<number, FlashblocksStream>): void {
    this.streams = streams;
  }

  /** A flashblocks chain's stream series, bound up front (alerts see zeros, not gaps). */
  private flashblocksChildren(chain: number) {
    const frames = Object.fromEntries(FRAME_KINDS.map((kind) => [kind, this.f.flashblocksFrames.child({ chain, kind })])) as Record<FrameKind, Counter>;
    const c = this.f;
    return {
      connected: c.flashblocksConnected.child({ chain }),
      stalled: c.flashblocksStalled.child({ chain }),
      frames,
      reconnects: c.flashblocksReconnects.child({ chain }),
    };
  }

  private readFlashblocks(): void {
    for (const [chain, s] of this.streams) {
      const c = this.flashblocksChildren(chain);
      c.connected.value = s.connected ? 1 : 0;
      c.stalled.value = s.problem === null ? 0 : 1;
      for (const kind of FRAME_KINDS) c.frames[kind].value = s.counts[kind];
      c.reconnects.value = s.reconnects;
    }
  }

  private board: HealthBoard | null = null;
  private accountsState: StoreSync | null = null;
  /** The state of an account store synced from a remote source, read at each snapshot. */
  watchAccounts(state: StoreSync): void {
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
        this.f.up.child({ chain: c.chainId, sequencer: upstreamLabel(u) }).value = board.state(slots[ci]![i]!) === 'up' ? 1 : 0;
      });
    });
  }

  readonly accountsReload = (result: ReloadResult, accounts: number): void => {
    this.f.reloads.child({ result }).value++;
    this.f.loaded.child({}).value = accounts;
  };

  readonly tls: TlsObserver = {
    certificate: (host, notAfter) => {
      this.f.tlsExpiry.child({ host }).value = notAfter;
    },
    reload: (result) => {
      this.f.tlsReloads.child({ result }).value++;
    },
  };

  /** Everything, in prom-client's getMetricsAsJSON form: the declared families of the parts that are on, in their order. */
  snapshot(): MetricJSON[] {
    this.readHealth();
    this.readLanes();
    const s = this.accountsState;
    if (s !== null) {
      this.f.storeAge.child({}).value = Math.round(Math.min(s.ageMs(), 1e12)) / 1000;
      this.f.storeUp.child({}).value = s.up ? 1 : 0;
      this.f.storeNotifications.child({}).value = s.notifications;
      this.f.storeResyncs.child({}).value = s.resyncs;
      this.f.storeFailures.child({}).value = s.failures;
    }
    this.tracking.read();
    this.readFlashblocks();
    this.f.logDropped.child({}).value = droppedLogLines();
    for (const source of IGNORED_FRAME_SOURCES) this.f.framesIgnored.child({ source }).value = ignoredFrames[source];
    for (const result of PROBE_RESULTS) this.f.keepWarmProbes.child({ result }).value = keepWarmProbes[result];
    if (this.rehearsals !== null) for (const result of REHEARSAL_RESULTS) this.f.rehearsals.child({ result }).value = this.rehearsals[result];
    const on: Record<Feature, boolean> = {
      always: true,
      websocket: this.config.websocket.enabled,
      sync: this.bySyncChain.size > 0,
      store: s !== null,
      track: this.config.chains.some((c) => c.track.enabled),
      tls: this.config.listen.tls.enabled,
      expressLane: this.lanesOn,
      flashblocks: this.config.chains.some((c) => c.flashblocks.enabled),
      rehearsal: this.config.rehearsal.everyMs > 0,
    };
    const out: MetricJSON[] = [];
    for (const key of Object.keys(METRICS) as (keyof typeof METRICS)[]) if (on[METRICS[key].part]) out.push(familyJSON(this.f[key], METRICS[key]));
    return out;
  }
}
