/**
 * One worker thread: its own uWS app on the shared port (SO_REUSEPORT spreads connections),
 * its own stages and upstream pools, and the process-wide rate-limit and transaction tables.
 * The main thread asks it for metrics snapshots and readiness, tells it to reload accounts
 * (SIGHUP) and to drain (SIGTERM).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { FileAccountStore } from './accounts/file-store.js';
import { MirrorAccountStore } from './accounts/postgres/mirror.js';
import { createApp } from './app.js';
import type { Config } from './config.js';
import type { HealthBoardBuffers } from './forward/health-board.js';
import type { SharedTableBuffers } from './limits/shared-tables.js';
import { createLogger, flushLogs } from './log.js';
import { initCrypto, uws } from './native.js';

export interface WorkerData {
  readonly config: Config;
  readonly index: number;
  readonly shared: { readonly rate: SharedTableBuffers; readonly tx: SharedTableBuffers; readonly health: HealthBoardBuffers };
  /** With the database account store: its shared state and the documents loaded so far (the main thread listens). */
  readonly accounts: { readonly state: SharedArrayBuffer; readonly docs: readonly unknown[] | null } | null;
  /** Human-readable log lines (`txgate --pretty`) as the main thread's, coloured when its stdout is a terminal. */
  readonly pretty: boolean;
  readonly colorize: boolean;
}

export type ToWorker =
  | { type: 'snapshot'; id: number }
  | { type: 'listen' }
  | { type: 'reload' }
  | { type: 'accounts'; docs: readonly unknown[] }
  | { type: 'drain' };

const data = workerData as WorkerData;
const port = parentPort!;
uws();
await initCrypto(data.config.crypto.secp256k1);
const log = createLogger({ level: data.config.log.level, pretty: data.pretty, colorize: data.colorize }).child({ worker: data.index });
const mirror = data.accounts === null ? null : new MirrorAccountStore(data.accounts.state, data.config.accounts.maxStaleMs, data.accounts.docs);
const app = createApp({
  config: data.config,
  log,
  idPrefix: `w${data.index}.${process.pid.toString(36)}`,
  shared: data.shared,
  ...(mirror !== null ? { store: mirror } : {}),
});
await app.prepare();
port.postMessage({ type: 'prepared' });

// An uncaught error here must not end the thread with its uWS sockets open (Node then aborts
// the whole process on the open handles, with every thread's requests in flight): tell the
// main thread, which drains every thread, this one included, and exits non-zero.
let failed = false;
const fatal = (e: unknown) => {
  log.fatal({ err: e }, 'uncaught error in a worker thread: draining every thread, then exiting 1');
  if (failed) return;
  failed = true;
  port.postMessage({ type: 'fatal' });
};
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);

port.on('message', (m: ToWorker) => {
  if (m.type === 'listen')
    app.listen().then(
      (bound) => port.postMessage({ type: 'listening', port: bound }),
      (e: unknown) => port.postMessage({ type: 'listenFailed', why: String(e) }),
    );
  else if (m.type === 'snapshot') port.postMessage({ type: 'snapshot', id: m.id, metrics: app.metrics?.snapshot() ?? [], readiness: app.readiness.report() });
  else if (m.type === 'accounts') mirror?.update(m.docs);
  else if (m.type === 'reload') {
    if (app.store instanceof FileAccountStore) void app.store.reload('SIGHUP');
  } else if (m.type === 'drain')
    void app.stop().then(() => {
      // The worker's batched log lines reach stdout before the thread is let go (bounded: a
      // stalled stdout must not keep the process from exiting).
      flushLogs(log, () => port.close());
    });
});
