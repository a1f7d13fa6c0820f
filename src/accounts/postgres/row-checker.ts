/**
 * Where the fleet store checks a row: a small one (under INLINE_BYTES of JSON: < 1 ms) on the
 * store's own thread, a large one on a thread of its own (row-check-worker.ts), so that
 * parsing a 100,000-address grant (JSON.parse ~40 ms, the checksums ~130 ms) never holds the
 * thread that serves (with one worker thread, the store runs on it). What comes back is the
 * account with its address lists as two strings each (address-list.ts): installing it costs
 * no parse and no Set of 100,000 entries. Should the checker's thread fail, the rows waiting on
 * it and the next ones are checked in place: slower, never lost.
 */
import { Worker } from 'node:worker_threads';
import { checkRow, type FetchedRow, type RowVerdict } from './row-check.js';

/** Rows of more JSON than this are checked on the checker's thread. */
export const INLINE_BYTES = 64 * 1024;

export class RowChecker {
  /** `inlineBytes`: rows under this are checked in place (Infinity: every row, as bench:fleet-stall compares). */
  constructor(private readonly inlineBytes = INLINE_BYTES) {}

  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private failed = false;
  private seq = 0;
  private readonly waiting = new Map<number, { row: FetchedRow; resolve: (v: RowVerdict) => void }>();

  /** Whether `check` would send this row to the checker's thread. */
  offThread(row: FetchedRow): boolean {
    return row.text !== null && row.text.length >= this.inlineBytes && !this.failed;
  }

  async check(row: FetchedRow): Promise<RowVerdict> {
    if (!this.offThread(row)) return checkRow(row);
    await this.start();
    if (this.worker === null) return checkRow(row);
    const n = ++this.seq;
    return new Promise((resolve) => {
      this.waiting.set(n, { row, resolve });
      this.worker!.postMessage({ n, row });
    });
  }

  private start(): Promise<void> {
    this.ready ??= new Promise<void>((resolve) => {
      const w = new Worker(new URL('./row-check-worker.js', import.meta.url));
      w.unref();
      this.worker = w;
      w.on('message', (m: { n: number; verdict: RowVerdict | null }) => {
        if (m.n === 0) return resolve();
        const job = this.waiting.get(m.n);
        this.waiting.delete(m.n);
        job?.resolve(m.verdict!);
      });
      const fail = () => {
        this.failed = true;
        this.worker = null;
        resolve();
        for (const [n, job] of this.waiting) {
          this.waiting.delete(n);
          job.resolve(checkRow(job.row));
        }
      };
      w.on('error', fail);
      w.on('exit', fail);
    });
    return this.ready;
  }

  close(): void {
    const w = this.worker;
    this.worker = null;
    this.failed = true;
    void w?.terminate();
  }
}
