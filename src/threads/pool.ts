/**
 * The worker threads of the main thread: started and prepared, asked for snapshots, told to
 * listen, reload, take accounts and drain, over the typed protocol (protocol.ts). Their log lines
 * arrive here too, and are written by this thread's sink (log.ts: one writer per process).
 */
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { acceptWorkerLog, type Logger } from '../log/log.js';
import type { FromWorker, ToWorker, WorkerData, WorkerSnapshot } from './protocol.js';

export class WorkerPool {
  private seq = 0;
  private readonly waiting = new Map<number, { worker: Worker; answer: (v: WorkerSnapshot | null) => void }>();
  /** Workers that have exited (after their drain): they answer nothing more. */
  private readonly gone = new Set<Worker>();
  private failed: string | null = null;
  private onFailure: ((why: string) => void) | null = null;

  private constructor(private readonly workers: readonly Worker[]) {}

  /** Starts `count` workers and resolves once every one has prepared (accounts, probes). */
  static async start(count: number, data: (index: number) => WorkerData, log: Logger): Promise<WorkerPool> {
    // The workers' heaps without V8's memory reducer (docs/performance.md#after-an-idle-spell): a
    // flag read when an isolate is made, so set before the first worker.
    setFlagsFromString('--no-memory-reducer');
    let pool: WorkerPool | null = null;
    const early: string[] = [];
    const fail = (why: string) => (pool === null ? early.push(why) : pool.fail(why));
    const workers = await Promise.all(
      Array.from({ length: count }, (_, index) => {
        const workerData = data(index);
        const t = workerData.track;
        const f = workerData.flashblocks;
        const transferList = [...(t === null ? [] : t.role === 'owner' ? t.ports : [t.port]), ...(f === null ? [] : f.role === 'lead' ? f.ports : [f.port])];
        const w = new Worker(new URL('../worker.js', import.meta.url), { workerData, transferList });
        w.on('message', (m: FromWorker) => {
          if (acceptWorkerLog(m)) return; // its log lines, written by this thread's sink
          if (m.kind === 'snapshot') pool?.waiting.get(m.id)?.answer({ metrics: m.metrics, readiness: m.readiness });
          else if (m.kind === 'fatal') fail(`worker ${index} failed`);
        });
        // A worker reports its own uncaught errors ('fatal') and keeps its sockets until drained.
        // One that ends with its uWS sockets open takes the process down with it (Node aborts on
        // the open handles), so there is no "worker gone, process serving" state to handle here.
        w.on('error', (e) => {
          log.fatal({ err: e, worker: index }, 'worker thread failed');
          fail(`worker ${index} failed`);
        });
        return new Promise<Worker>((resolve, reject) => {
          const first = (m: FromWorker) => {
            if (m.kind === 'log') return; // lines logged while preparing
            w.off('message', first);
            if (m.kind === 'prepared') resolve(w);
            else reject(new Error(`worker ${index}: ${m.kind}`));
          };
          w.on('message', first);
          w.once('error', reject);
        });
      }),
    );
    pool = new WorkerPool(workers);
    for (const w of workers) w.once('exit', () => pool?.exited(w));
    for (const why of early) pool.fail(why);
    return pool;
  }

  /** A worker is gone: what was asked of it is answered with nothing (a snapshot never hangs). */
  private exited(w: Worker): void {
    this.gone.add(w);
    for (const q of this.waiting.values()) if (q.worker === w) q.answer(null);
  }

  private fail(why: string): void {
    if (this.failed !== null) return;
    this.failed = why;
    this.onFailure?.(why);
  }

  /** Called once if a worker fails (at once if one has). */
  whenFailed(cb: (why: string) => void): void {
    this.onFailure = cb;
    if (this.failed !== null) cb(this.failed);
  }

  send(m: ToWorker): void {
    for (const w of this.workers) w.postMessage(m);
  }

  /**
   * The readiness of every worker still running, now (an exited one is left out), and with
   * `metrics` its metrics too: a worker serializes every metric for that, which the readiness
   * refresh (four times a second) has no use for.
   */
  async snapshots(metrics = true): Promise<WorkerSnapshot[]> {
    const all = await Promise.all(
      this.workers
        .filter((w) => !this.gone.has(w))
        .map(
          (w) =>
            new Promise<WorkerSnapshot | null>((resolve) => {
              const id = ++this.seq;
              this.waiting.set(id, {
                worker: w,
                answer: (v) => {
                  this.waiting.delete(id);
                  resolve(v);
                },
              });
              w.postMessage({ kind: 'snapshot', id, metrics } satisfies ToWorker);
            }),
        ),
    );
    return all.filter((s): s is WorkerSnapshot => s !== null);
  }

  /** Every worker opens the public port; rejects with the first failure. */
  listen(): Promise<void> {
    return Promise.all(
      this.workers.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            const on = (m: FromWorker) => {
              if (m.kind !== 'listening' && m.kind !== 'listenFailed') return;
              w.off('message', on);
              if (m.kind === 'listening') resolve();
              else reject(new Error(m.why));
            };
            w.on('message', on);
            w.postMessage({ kind: 'listen' } satisfies ToWorker);
          }),
      ),
    ).then(() => {});
  }

  /** Every worker drains and exits (one already gone has nothing to drain). */
  drain(): Promise<void> {
    return Promise.all(
      this.workers
        .filter((w) => !this.gone.has(w))
        .map(
          (w) =>
            new Promise<void>((resolve) => {
              w.once('exit', () => resolve());
              w.postMessage({ kind: 'drain' } satisfies ToWorker);
            }),
        ),
    ).then(() => {});
  }
}
