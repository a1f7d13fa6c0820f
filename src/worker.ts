/**
 * One worker thread: its own uWS app on the shared port (SO_REUSEPORT spreads connections),
 * its own stages and upstream pools, and the process-wide rate-limit and transaction tables.
 * The main thread asks it for metrics snapshots and readiness, tells it to reload accounts
 * (SIGHUP) and to drain (SIGTERM).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openMirror } from './accounts/open-store.js';
import { createApp } from './app.js';
import { createLogger, flushLogs } from './log/log.js';
import { initCrypto, uws } from './base/native.js';
import type { FromWorker, ToWorker, WorkerData } from './threads/protocol.js';

const data = workerData as WorkerData;
const port = parentPort!;
const send = (m: FromWorker) => port.postMessage(m);
uws();
await initCrypto(data.config.crypto.secp256k1);
const log = createLogger({ level: data.config.log.level, pretty: data.pretty, colorize: data.colorize }).child({ worker: data.index });
const mirror = data.accounts === null ? null : openMirror(data.config.accounts, data.accounts);
const app = createApp({
  config: data.config,
  log,
  idPrefix: `w${data.index}.${process.pid.toString(36)}`,
  shared: data.shared,
  trackSeam: data.track,
  flashblocksSeam: data.flashblocks,
  ...(mirror !== null ? { store: mirror } : {}),
});
await app.prepare();
send({ kind: 'prepared' });

// An uncaught error here must not end the thread with its uWS sockets open (Node then aborts
// the whole process on the open handles, with every thread's requests in flight): tell the
// main thread, which drains every thread, this one included, and exits non-zero.
let failed = false;
const fatal = (e: unknown) => {
  log.fatal({ err: e }, 'uncaught error in a worker thread: draining every thread, then exiting 1');
  if (failed) return;
  failed = true;
  send({ kind: 'fatal' });
};
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);

port.on('message', (m: ToWorker) => {
  if (m.kind === 'listen')
    app.listen().then(
      (bound) => send({ kind: 'listening', port: bound }),
      (e: unknown) => send({ kind: 'listenFailed', why: String(e) }),
    );
  else if (m.kind === 'snapshot')
    send({ kind: 'snapshot', id: m.id, metrics: m.metrics ? (app.metrics?.snapshot() ?? []) : [], readiness: app.readiness.report() });
  else if (m.kind === 'accounts') mirror?.update(m.update);
  else if (m.kind === 'reload' && app.store.hearsSignal !== true) void app.store.reload?.('SIGHUP');
  else if (m.kind === 'tlsReload') app.tls?.reload('SIGHUP');
  else if (m.kind === 'drain')
    void app.stop().then(() => {
      // The worker's batched log lines reach stdout before the thread is let go (bounded: a
      // stalled stdout must not keep the process from exiting).
      flushLogs(log, () => port.close());
    });
});
