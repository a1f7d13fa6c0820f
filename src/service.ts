/**
 * The whole service in one process: the public listener on `workers` threads (one uWS app each,
 * sharing the port), and the internal listener (metrics aggregated over every thread, health
 * and readiness mirrors) on the main thread. With one worker, everything runs on the main thread.
 */
import { openSharedStore } from './accounts/open-store.js';
import type { SharedAccountStore } from './accounts/types.js';
import { createApp, type App } from './app.js';
import { slotCount } from './threads/thread-parts.js';
import type { Config } from './config/config.js';
import { InternalServer } from './http/internal.js';
import { readinessReport, type ReadinessReport } from './front/readiness.js';
import { ChainLink } from './forward/chain-link.js';
import { HealthBoard } from './health/board.js';
import { HealthProber } from './health/prober.js';
import { allocateTable } from './limits/shared-tables.js';
import { BodyBudget } from './http/body-budget.js';
import type { Logger } from './log/log.js';
import type { MetricJSON } from './metrics/json.js';
import { WorkerPool } from './threads/pool.js';
import { freePort } from './base/free-port.js';
import { ExpressLanes } from './express-lane/lanes.js';
import type { WorkerSnapshot } from './threads/protocol.js';
import { seamParts, type TrackSeamPart } from './track/seam/protocol.js';
import { flashblocksSeamParts, streamRead } from './threads/flashblocks-seam.js';
import { MessageChannel } from 'node:worker_threads';

export interface Service {
  /** The in-thread app (single-threaded mode only). */
  readonly app: App | null;
  readonly port: number;
  readonly internalPort: number | null;
  readonly chains: readonly number[];
  readiness(): Promise<ReadinessReport>;
  /** Re-read the accounts in every thread (SIGHUP), where the store does not hear the signal itself, and the TLS certificates. */
  reload(): void;
  stop(): Promise<void>;
  /**
   * Called once if a worker thread fails (an uncaught error): the process should then stop
   * gracefully and exit non-zero, for its supervisor to start a fresh one.
   */
  onFailure(cb: (why: string) => void): void;
}

/** Rate-limit buckets (account × chain) and transaction hashes the tables can hold. */
const RATE_SLOTS = 1 << 16;
const TX_SLOTS = 1 << 18;
/** Accounts with WebSocket connections open at once (a slot frees when its count is back to 0). */
const CONN_SLOTS = 1 << 14;

export interface ServiceOptions {
  /** Human-readable log lines in every thread (the main thread's logger is made by the caller). */
  readonly pretty?: boolean;
}

export async function startService(config: Config, log: Logger, opts: ServiceOptions = {}): Promise<Service> {
  return config.workers > 1 ? startThreads(config, log, opts.pretty === true) : startSingle(config, log);
}

/**
 * The internal listener and the readiness it mirrors. From `markDraining()` on (the first thing a stop
 * does) its /ready answers 503 `draining` until the process exits, whatever the threads still
 * report: a thread that has finished its drain and exited reports nothing (docs/operations.md#drain-step-by-step).
 */
async function startInternal(config: Config, log: Logger, snapshots: () => Promise<MetricJSON[][]>, threads: () => Promise<ReadinessReport>) {
  let draining = false;
  // Draining is checked after the threads answer: a refresh begun before the stop cannot undo it.
  const readiness = async (): Promise<ReadinessReport> => {
    const r = await threads();
    return draining ? drainingReport(r) : r;
  };
  const markDraining = () => {
    draining = true;
    last = drainingReport(last);
  };
  let last: ReadinessReport = { ready: false, body: '{"status":"not_ready","notReady":["starting"]}' };
  const refresh = async () => {
    last = await readiness();
  };
  if (!config.internal.enabled) return { internal: null, internalPort: null, timer: undefined, refresh: async () => {}, readiness, markDraining };
  const timer = setInterval(() => void refresh(), 250);
  timer.unref();
  void refresh();
  const internal = new InternalServer({ log, readiness: () => last, snapshots });
  const internalPort = await internal.listen(config.internal.host, config.internal.port);
  return { internal, internalPort, timer, refresh, readiness, markDraining };
}

/** A report with `draining` first among what is not ready (once, whatever else the threads said). */
function drainingReport(r: ReadinessReport): ReadinessReport {
  return readinessReport(['draining', ...(r.notReady ?? []).filter((p) => p !== 'draining' && p !== 'starting')], r.warnings ?? [], r.detail);
}

async function startSingle(config: Config, log: Logger): Promise<Service> {
  const app = createApp({ config, log });
  await app.prepare();
  // The public port opens last: a supervisor that waits for /health finds everything up.
  const { internal, internalPort, refresh, readiness, markDraining } = await startInternal(
    config,
    log,
    async () => (app.metrics !== null ? [app.metrics.snapshot()] : []),
    async () => app.readiness.report(),
  );
  // A store that loads in the background (the database) is loaded first: no request meets an empty store.
  await app.store.whenLoaded?.();
  const port = await app.listen();
  await refresh();
  return {
    app,
    port,
    internalPort,
    chains: app.chains.map((c) => c.chainId),
    readiness,
    reload: () => {
      if (app.store.hearsSignal !== true) void app.store.reload?.('SIGHUP');
      app.tls?.reload('SIGHUP');
    },
    async stop() {
      markDraining();
      await app.stop();
      internal?.close();
    },
    onFailure() {
      /* one thread: an uncaught error reaches the CLI's own handler */
    },
  };
}

/** Readiness over every thread: ready when each is, else the union of their problems; the detail as the first thread says it. */
function mergeReadiness(all: readonly WorkerSnapshot[]): ReadinessReport {
  const notReady = [...new Set(all.flatMap((a) => a.readiness.notReady ?? []))];
  const warnings = [...new Set(all.flatMap((a) => a.readiness.warnings ?? []))];
  return readinessReport(notReady, warnings, all[0]?.readiness.detail);
}

/**
 * The account store of a threaded process where its kind is shared (e.g. one database listener
 * per process): run on the main thread, pushing every change to the workers' mirrors. Null where
 * each worker opens its own (the accounts file: each reads it).
 */
async function sharedStore(config: Config, log: Logger): Promise<SharedAccountStore | null> {
  const store = openSharedStore(config.accounts, log);
  await store?.start();
  return store;
}

/**
 * One tracker per process (docs/tracking.md#one-tracker-per-process): worker 0 owns the tracked
 * chains' trackers, every other worker a port to it. None where no chain tracks.
 */
function trackSeams(config: Config): TrackSeamPart[] {
  if (!config.chains.some((c) => c.track.enabled)) return [];
  return seamParts(config.workers, () => new MessageChannel());
}

async function startThreads(config: Config, log: Logger, pretty: boolean): Promise<Service> {
  // Every thread must bind the same port: resolve an ephemeral one first.
  // Each worker thread opens its own lanes (docs/express-lane.md#start-up-and-threads); the contract is checked
  // here first, so that a start refused says so in one line on this thread.
  if (config.chains.some((c) => c.expressLane.enabled)) await (await ExpressLanes.open(config.chains)).close();
  const listenPort = config.listen.port === 0 ? await freePort(config.listen.host) : config.listen.port;
  const cfg: Config = { ...config, listen: { ...config.listen, port: listenPort } };
  // One prober for the process, on this thread: every worker reads its verdicts (and writes a
  // transport error it meets) on the shared board, so readiness and forwarding agree.
  const board = HealthBoard.allocate(slotCount(config));
  const prober = new HealthProber(ChainLink.forChains(config.chains, board, log), log);
  await prober.start();
  const shared = {
    rate: allocateTable(RATE_SLOTS),
    tx: allocateTable(TX_SLOTS),
    conns: allocateTable(CONN_SLOTS),
    health: board.buffers,
    bodies: BodyBudget.allocate(),
  };
  const store = await sharedStore(config, log);
  const accounts = store === null ? null : store.mirrorSeed();
  const colorize = process.stdout.isTTY === true;
  const seams = trackSeams(config);
  // One flashblocks stream per chain and process: worker 0 reads it and hands its slices to the others.
  const streams = config.chains.some(streamRead) ? flashblocksSeamParts(config.workers, () => new MessageChannel()) : [];
  const pool = await WorkerPool.start(
    config.workers,
    (index) => ({ config: cfg, index, shared, accounts, pretty, colorize, track: seams[index] ?? null, flashblocks: streams[index] ?? null }),
    log,
  );
  if (store !== null) {
    const push = (update: unknown) => pool.send({ kind: 'accounts', update });
    store.onChange(push);
    if (store.ready) push(store.current()); // a change while the workers started
  }
  const { internal, internalPort, timer, refresh, readiness, markDraining } = await startInternal(
    config,
    log,
    async () => (await pool.snapshots()).map((a) => a.metrics),
    async () => mergeReadiness(await pool.snapshots(false)),
  );
  // The public port opens last, on every thread: a supervisor that waits for /health finds
  // the internal listener and every thread up.
  await store?.whenLoaded(); // a shared store's first load is in every thread before the port opens
  await pool.listen();
  await refresh();
  return {
    app: null,
    port: listenPort,
    internalPort,
    chains: config.chains.map((c) => c.chainId),
    readiness,
    reload: () => {
      if (store !== null) void store.reload('SIGHUP');
      else pool.send({ kind: 'reload' });
      if (config.listen.tls.enabled) pool.send({ kind: 'tlsReload' });
    },
    async stop() {
      markDraining();
      await pool.drain();
      if (timer !== undefined) clearInterval(timer);
      internal?.close();
      await prober.stop();
      store?.close();
    },
    onFailure(cb) {
      pool.whenFailed(cb);
    },
  };
}
