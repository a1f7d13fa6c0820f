/**
 * The composition root: builds the per-chain runtime, the stages in their order, the front end,
 * the account store, the forwarders and the readiness checks from a validated configuration.
 */
import { BusyPoll, cpuQuota } from './busy-poll.js';
import { openStore } from './accounts/open-store.js';
import { createTipAddressesHandler } from './http/tip-addresses.js';
import type { AccountStore, ReloadResult } from './accounts/types.js';
import type { Config } from './config.js';
import { ChainDuplicates, Duplicates } from './forward/dedup.js';
import { ChainForwarder, type ForwardObserver } from './forward/forwarder.js';
import { SyncSender, type SyncObserver } from './sync/sync-send.js';
import { HealthBoard, slotIndex } from './forward/health-board.js';
import { HealthProber, healthProblems } from './forward/health.js';
import { Readiness } from './http/readiness.js';
import { PublicServer } from './http/server.js';
import { quotaHeaders } from './limits/quota-headers.js';
import { RateLimiter, type TokenBuckets } from './limits/rate-limiter.js';
import { LocalCounts, SharedCounts, SharedRateTable, SharedTxTable } from './limits/shared-tables.js';
import type { SharedParts } from './threads/protocol.js';
import { BodyBudget } from './http/body-budget.js';
import type { Logger } from './log.js';
import type { PipelineHooks, RequestObserver } from './pipeline/pipeline.js';
import { createForwardStage } from './stages/forward.js';
import { buildChains, HostTable, type ChainRuntime } from './chains.js';
import { admissionStages } from './stages/list.js';
import { TxDecoder } from './tx/decoder.js';
import { Metrics } from './metrics/metrics.js';
import { BUILD } from './build.js';
import type { LaneObserver } from './ws/lane.js';

export { buildChains } from './chains.js';
export { admissionStages, type Admitted } from './stages/list.js';

export interface Observers {
  readonly request?: RequestObserver;
  /** The WebSocket lane's frames, and its connections (with `websocket.enabled`). */
  readonly wsRequest?: RequestObserver;
  readonly wsLane?: LaneObserver;
  readonly forward?: ForwardObserver & SyncObserver;
  readonly accountsReload?: (result: ReloadResult, accounts: number) => void;
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
}

export interface App {
  readonly server: PublicServer;
  readonly readiness: Readiness;
  readonly chains: readonly ChainRuntime[];
  readonly store: AccountStore;
  readonly forwarders: ReadonlyMap<number, ChainForwarder>;
  readonly limiter: TokenBuckets;
  /** The metrics sink of this app (null when metrics are disabled). */
  readonly metrics: Metrics | null;
  /** Loads accounts and probes sequencers once (this app's prober, if it runs one). */
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
  const obs: Observers =
    opts.observers ??
    (metrics !== null
      ? {
          request: metrics.request,
          wsRequest: metrics.wsRequest,
          wsLane: metrics.wsLane,
          forward: metrics.forward,
          accountsReload: metrics.accountsReload,
        }
      : {});
  const chains = buildChains(config);
  const hosts = new HostTable(chains);
  const readiness = new Readiness();
  const store = opts.store ?? openStore(config.accounts, log, obs.accountsReload);
  if (store.state !== undefined) metrics?.watchAccounts(store.state);
  const local = opts.shared === undefined ? new RateLimiter() : null;
  const limiter: TokenBuckets = local ?? new SharedRateTable(opts.shared!.rate);
  const txTable = opts.shared === undefined ? null : new SharedTxTable(opts.shared.tx);
  const duplicates = new Duplicates(new Map(config.chains.map((c) => [c.chainId, new ChainDuplicates(config.dedup, txTable)])));
  const decoders = new Map(config.chains.map((c) => [c.chainId, new TxDecoder(c.chainId, c.hardfork, { signature: config.crypto.signature })]));
  const board = opts.shared === undefined ? HealthBoard.allocate(slotCount(config)) : new HealthBoard(opts.shared.health);
  metrics?.watchHealth(board);
  const slots = slotIndex(config.chains);
  const forwarders = new Map(
    config.chains.map((c, i) => [c.chainId, new ChainForwarder(c, duplicates.forChain(c.chainId), log, { board, slots: slots[i]! }, obs.forward)]),
  );
  // The sync send beside the plain one, on the chains that turn it on: its own connections, the
  // forwarder's outcome rules, plain send and chain RPC client.
  const syncSenders = new Map(
    config.chains.flatMap((c, i) =>
      c.sync.enabled ? [[c.chainId, new SyncSender(c, { board, slots: slots[i]! }, forwarders.get(c.chainId)!, obs.forward)] as const] : [],
    ),
  );
  // Bytes already in flight cost no rate-limit token: a plain send's (dedup.ts) or a waiting sync call's.
  const sendsInFlight = {
    isDuplicate: (chainId: number, hash: string) => duplicates.isDuplicate(chainId, hash) || syncSenders.get(chainId)?.joins(hash) === true,
  };
  const prober = opts.shared === undefined ? new HealthProber(config.chains, board, log) : null;

  readiness.add(() => accountsProblem(store, config.accounts.maxStaleMs));
  readiness.warn(() => (store.ready && store.problem ? `${store.problem} (the last good accounts stay in force)` : null));
  readiness.add(() => healthProblems(config.chains, board));

  const buildPipeline = (hooks: PipelineHooks) =>
    admissionStages({ config, hosts, store, decoders, limiter, duplicates: sendsInFlight }).end(createForwardStage(forwarders, syncSenders), hooks);

  const quota = config.busyPoll ? cpuQuota() : null;
  if (quota !== null) log.warn({ quota }, 'busy polling refused: this process runs under a CPU quota, which a spinner would spend');
  const busyPoll =
    config.busyPoll && quota === null
      ? new BusyPoll({ onRefused: (why) => log.warn({ why }, 'busy polling refused: the spinner could not lower its priority') })
      : null;
  const server = new PublicServer({
    log,
    bodies: new BodyBudget(opts.shared?.bodies ?? BodyBudget.allocate(), config.limits.maxBufferedBodyBytes),
    ...(busyPoll !== null ? { busyPoll } : {}),
    readiness,
    buildPipeline,
    tipAddresses: createTipAddressesHandler({ store, hosts, allowUntipped: config.allowUntipped, maxAgeSeconds: config.tipAddresses.maxAgeSeconds }),
    serverTiming: config.profiling.serverTiming,
    answerHeaders: quotaHeaders(limiter),
    ...(obs.request !== undefined ? { observer: obs.request } : {}),
    ...(config.websocket.enabled
      ? {
          websocket: {
            config: config.websocket,
            maxBodyBytes: config.limits.maxBodyBytes,
            hosts,
            store,
            counts: opts.shared === undefined ? new LocalCounts() : new SharedCounts(opts.shared.conns),
            ...(obs.wsRequest !== undefined ? { observer: obs.wsRequest } : {}),
            ...(obs.wsLane !== undefined ? { lane: obs.wsLane } : {}),
          },
        }
      : {}),
    ...(opts.idPrefix !== undefined ? { idPrefix: opts.idPrefix } : {}),
  });

  return {
    server,
    readiness,
    chains,
    store,
    forwarders,
    limiter,
    metrics,
    async prepare() {
      await store.start();
      await prober?.start();
      local?.startSweeping();
      if (busyPoll !== null) await busyPoll.started;
    },
    listen() {
      return server.listen(config.listen.host, config.listen.port);
    },
    async start() {
      await this.prepare();
      return this.listen();
    },
    async stop() {
      // Sync calls waiting for a receipt from the chain RPC answer now (code 4 with the hash).
      for (const s of syncSenders.values()) s.drain();
      await server.drain(config.shutdown.graceMs);
      await busyPoll?.stop();
      await prober?.stop();
      store.close();
      local?.close();
      await Promise.all([...forwarders.values()].map((f) => f.close()));
      await Promise.all([...syncSenders.values()].map((s) => s.close()));
    },
  };
}

/** Sequencer slots on the health board: one per configured sequencer. */
export function slotCount(config: Config): number {
  return config.chains.reduce((n, c) => n + c.sequencers.length, 0);
}

/** The readiness problem of the account store, if any: never loaded, or stale. */
export function accountsProblem(store: AccountStore, maxStaleMs: number): string | null {
  if (!store.ready) return store.problem ? `accounts not loaded: ${store.problem}` : 'accounts not loaded';
  return store.stale ? `accounts stale: the account store has not been reached for over ${maxStaleMs} ms (credentials_stale)` : null;
}
