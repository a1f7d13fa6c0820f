/**
 * The composition root: from a validated configuration, the per-chain runtime, the parts that
 * depend on the thread mode (threads/thread-parts.ts), the sends (forwarders and sync senders),
 * the stages in their order, the account store, the readiness checks (ready-checks.ts) and the
 * front ends on the public port.
 */
import { BusyPoll, cpuQuota } from './base/busy-poll.js';
import { Activity } from './rehearsal/activity.js';
import { Rehearsal } from './rehearsal/rehearsal.js';
import { openStore } from './accounts/open-store.js';
import type { AccountStore, ReloadResult } from './accounts/types.js';
import type { Config } from './config/config.js';
import type { ChainForwarder, ForwardObserver } from './forward/forwarder.js';
import { PublicPort, portParts, type UwsFrontEnd } from './http/port.js';
import type { Readiness } from './front/readiness.js';
import { HttpFrontEnd } from './http/server.js';
import { createTipAddressesHandler } from './http/tip-addresses.js';
import type { TokenBuckets } from './limits/rate-limiter.js';
import type { Logger } from './log/log.js';
import { Metrics } from './metrics/metrics.js';
import type { PipelineHooks, RequestObserver } from './pipeline/pipeline.js';
import { createForwardStage } from './stages/forward.js';
import { admissionStages } from './stages/list.js';
import type { SyncObserver } from './sync/sync-send.js';
import { buildSends } from './sends.js';
import type { SharedParts } from './threads/protocol.js';
import { singleThread, workerThread } from './threads/thread-parts.js';
import { readinessOf } from './ready-checks.js';
import { buildChains, HostTable, type ChainRuntime } from './config/chains.js';
import { TxDecoder } from './tx/decoder.js';
import { BUILD } from './base/build.js';
import { WebSocketTransport, type WsObserver } from './ws/frames.js';
import type { Tracker, TrackObserver } from './track/tracker.js';
import type { TrackSeamPart } from './track/seam/protocol.js';
import { Tracking } from './track/tracking.js';
import { type FlashblocksSeamPart, flashblocksProblems } from './threads/flashblocks-seam.js';
import { TlsEdge, type TlsObserver } from './tls/edge.js';
import { freePort } from './base/free-port.js';
import { ExpressLanes, type OpenOptions as LaneOpenOptions } from './express-lane/lanes.js';
import type { ExpressLanesRef } from './forward/express-send.js';

export interface Observers {
  /** A front end's requests, by its transport label (`http`, `ws`). */
  readonly requests?: (transport: string) => RequestObserver;
  /** The WebSocket transport's connections (with `websocket.enabled`). */
  readonly wsTransport?: WsObserver;
  readonly forward?: ForwardObserver & SyncObserver;
  /** The trackers' moves (chains with `track.enabled`). */
  readonly track?: TrackObserver;
  readonly accountsReload?: (result: ReloadResult, accounts: number) => void;
  /** Certificates in force and their reloads (with `listen.tls.enabled`). */
  readonly tls?: TlsObserver;
}

export interface AppOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly observers?: Observers;
  readonly idPrefix?: string;
  /** An account store other than the accounts file (e.g. database-backed). */
  readonly store?: AccountStore;
  /**
   * With several worker threads: the process-wide rate-limit and transaction tables, and the
   * sequencer health board the main thread's prober writes (this app then runs no prober).
   */
  readonly shared?: SharedParts;
  /** How the express lanes open (tests: a round clock that follows the chain's). */
  readonly lanes?: LaneOpenOptions;
  /** With several worker threads: this thread's part of the one tracker per process (track/seam/). */
  readonly trackSeam?: TrackSeamPart | null;
  /** With several worker threads: this thread's part of the one flashblocks stream per chain and process (threads/flashblocks-seam.ts). */
  readonly flashblocksSeam?: FlashblocksSeamPart | null;
}

export interface App {
  /** The public port and its front ends. */
  readonly port: PublicPort;
  /** The HTTP front end (POST / and the GET resources). */
  readonly http: HttpFrontEnd;
  readonly readiness: Readiness;
  readonly chains: readonly ChainRuntime[];
  readonly store: AccountStore;
  readonly forwarders: ReadonlyMap<number, ChainForwarder>;
  /** The chains that track their accepted transactions (`chains[].track`), by chain id. */
  readonly trackers: ReadonlyMap<number, Tracker>;
  readonly limiter: TokenBuckets;
  /** The metrics sink of this app (null when metrics are disabled). */
  readonly metrics: Metrics | null;
  /** TLS on the public port (null when `listen.tls` is off): reload re-reads its certificates. */
  readonly tls: TlsEdge | null;
  /** The express lanes of this thread (open after prepare; none where no chain enables one). */
  readonly lanes: ExpressLanesRef;
  /** This thread's rehearsal (config `rehearsal.everyMs`), null where off. */
  readonly rehearsal: Rehearsal | null;
  /** Loads accounts, opens the express lanes (LaneStartError: one line) and probes sequencers once (this app's prober, if it runs one). */
  prepare(): Promise<void>;
  /** Opens the public port (after prepare); resolves with the bound port. */
  listen(): Promise<number>;
  /** prepare, then listen. */
  start(): Promise<number>;
  /** Graceful stop: drain within the grace period, then close upstream pools. */
  stop(): Promise<void>;
}

export function createApp(opts: AppOptions): App {
  const { config, log } = opts;
  const metrics = config.metrics.enabled ? new Metrics(config, BUILD) : null;
  const obs = opts.observers ?? (metrics !== null ? metricsObservers(metrics) : {});
  const chains = buildChains(config);
  const hosts = new HostTable(chains);
  const store = opts.store ?? openStore(config.accounts, log, obs.accountsReload);
  if (store.state !== undefined) metrics?.watchAccounts(store.state);
  const thread = opts.shared === undefined ? singleThread(config, log) : workerThread(config, opts.shared);
  metrics?.watchHealth(thread.board);
  // Each thread follows the auction itself (docs/express-lane.md#start-up-and-threads): opened in prepare.
  const lanes: ExpressLanesRef = { lanes: ExpressLanes.none };
  metrics?.watchLanes(lanes);
  const sends = buildSends(config, log, thread, obs.forward, new Tracking(config, log, obs.track, opts.trackSeam ?? null), lanes, opts.flashblocksSeam ?? null);
  const readiness = readinessOf(config, store, thread.board, lanes);
  readiness.warn(() => sends.tracking.problems());
  if (sends.streams.size > 0) readiness.warn(() => flashblocksProblems(sends.streams));
  metrics?.watchTrackers(sends.trackers);
  metrics?.watchFlashblocks(sends.streams);

  const decoders = decodersOf(config);
  const buildPipeline = (hooks: PipelineHooks) =>
    admissionStages({
      config,
      hosts,
      store,
      decoders,
      limiter: thread.limiter,
      duplicates: sends.inFlight,
      trackers: sends.tracking.chains,
      heads: sends.conditional.heads,
    }).end(createForwardStage(sends.forwarders, sends.syncSenders, sends.conditional.senders), hooks);
  const busyPoll = busyPollOf(config, log);
  // Told of every request where something listens: busy polling, the rehearsal's idle look.
  const activity = busyPoll !== null || config.rehearsal.everyMs > 0 ? new Activity(busyPoll) : null;
  const port = portParts(log, readiness, opts.idPrefix);
  const observer = (transport: string) => obs.requests?.(transport);

  // The front ends on the public port, registered in this order (the WebSocket transport's upgrade on
  // `GET /` before HTTP's routes, as uWS has always been given them).
  const http = new HttpFrontEnd({
    port,
    buildPipeline,
    bodies: thread.bodies,
    tipAddresses: createTipAddressesHandler({ store, hosts, allowUntipped: config.allowUntipped, maxAgeSeconds: config.tipAddresses.maxAgeSeconds }),
    serverTiming: config.profiling.serverTiming,
    ...optional('activity', activity ?? undefined),
    ...optional('observer', observer('http')),
  });
  const frontEnds: UwsFrontEnd[] = [
    ...(config.websocket.enabled
      ? [
          new WebSocketTransport({
            port,
            buildPipeline,
            config: config.websocket,
            maxBodyBytes: config.limits.maxBodyBytes,
            admission: { hosts, store },
            counts: thread.counts,
            tracking: sends.tracking.statusFeeds(),
            ...optional('activity', activity ?? undefined),
            ...optional('observer', observer('ws')),
            ...optional('connections', obs.wsTransport),
          }),
        ]
      : []),
    http,
  ];
  const tls = config.listen.tls.enabled ? new TlsEdge(config.listen.tls, log, obs.tls) : null;
  // The submission path rehearsed through silences (config `rehearsal.everyMs`): started once the public port listens.
  const rehearsal = activity === null ? null : Rehearsal.of({ config, log, decoders, readiness, bodies: thread.bodies, activity });
  if (rehearsal !== null) metrics?.watchRehearsal(rehearsal.counts);
  const publicPort: PublicPort = new PublicPort(
    frontEnds,
    readiness,
    tls === null ? undefined : (register) => tls.open(register, (next) => publicPort.swap(next)),
  );

  return {
    port: publicPort,
    http,
    readiness,
    chains,
    store,
    forwarders: sends.forwarders,
    trackers: sends.trackers,
    limiter: thread.limiter,
    metrics,
    tls,
    lanes,
    rehearsal,
    async prepare() {
      if (config.chains.some((c) => c.expressLane.enabled))
        lanes.lanes = await ExpressLanes.open(config.chains, { note: (msg) => log.warn(msg), ...opts.lanes });
      await store.start();
      await thread.prober?.start();
      thread.local?.startSweeping();
      if (busyPoll !== null) await busyPoll.started;
    },
    async listen() {
      // A TLS rotation listens again on the same port, which needs a port bound by number.
      const port = tls !== null && config.listen.port === 0 ? await freePort(config.listen.host) : config.listen.port;
      const bound = await publicPort.listen(config.listen.host, port);
      await tls?.watchFiles();
      await rehearsal?.start();
      return bound;
    },
    async start() {
      await this.prepare();
      return this.listen();
    },
    async stop() {
      // Sync calls waiting for a receipt from the chain RPC answer now (code 4 with the hash).
      for (const s of sends.syncSenders.values()) s.drain();
      sends.conditional.close();
      tls?.close();
      // No rehearsal from here on (it stops looking at once); the drain starts in this same turn (readiness says draining).
      const rehearsed = rehearsal?.stop();
      await publicPort.drain(config.shutdown.graceMs);
      await rehearsed;
      await busyPoll?.stop();
      await thread.prober?.stop();
      store.close();
      thread.local?.close();
      await Promise.all([...sends.forwarders.values()].map((f) => f.close()));
      await Promise.all([...sends.syncSenders.values()].map((s) => s.close()));
      await Promise.all(sends.links.map((l) => l.close()));
      await sends.tracking.close();
      for (const h of sends.heads.values()) h.close();
      sends.stopSeam();
      for (const f of sends.streams.values()) f.close();
      await lanes.lanes.close();
    },
  };
}

/** `{ [key]: value }`, or nothing when the value is undefined (exactOptionalPropertyTypes). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function metricsObservers(metrics: Metrics): Observers {
  return {
    requests: (transport) => metrics.requestObserver(transport),
    wsTransport: metrics.wsTransport,
    forward: metrics.forward,
    track: metrics.track,
    accountsReload: metrics.accountsReload,
    tls: metrics.tls,
  };
}

function decodersOf(config: Config): Map<number, TxDecoder> {
  return new Map(config.chains.map((c) => [c.chainId, new TxDecoder(c.chainId, c.hardfork, { signature: config.crypto.signature })]));
}

/** The busy-polling spinner (config `busyPoll`), unless refused: under a CPU quota, which a spinner would spend. */
function busyPollOf(config: Config, log: Logger): BusyPoll | null {
  if (!config.busyPoll) return null;
  const quota = cpuQuota();
  if (quota !== null) {
    log.warn({ quota }, 'busy polling refused: this process runs under a CPU quota, which a spinner would spend');
    return null;
  }
  return new BusyPoll({ onRefused: (why) => log.warn({ why }, 'busy polling refused: the spinner could not lower its priority') });
}
