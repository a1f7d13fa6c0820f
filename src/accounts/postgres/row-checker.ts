/**
 * Where the fleet store checks a large row (over INLINE_BYTES of JSON; a small one is read
 * with its batch and checked in place): on a thread of its own (row-check-worker.ts),
 * which reads the row itself by primary key on a connection of its own, so that the transfer
 * of a 100,000-address grant (megabytes), its JSON parse and its checksums (bench:fleet-stall
 * measures them) never hold the thread that serves (with one worker thread, the store runs on
 * it). What comes back is the account with its address lists as two strings each (address-list.ts): installing
 * it costs no parse and no Set of 100,000 entries.
 */
import { Worker } from 'node:worker_threads';
import type { RowVerdict } from './row-check.js';

/** Rows of more JSON than this are read and checked on the checker's thread. */
export const INLINE_BYTES = 64 * 1024;

/** The checker's answer: a verdict, the row gone (null), or why it could not be read. */
export type CheckAnswer = { readonly verdict: RowVerdict | null } | { readonly error: string };

export class RowChecker {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private seq = 0;
  private readonly waiting = new Map<number, (a: CheckAnswer) => void>();

  /**
   * `url` and `options`: the checker's own connection (one backend). `inlineBytes`: rows under
   * this are checked in place (Infinity: every row, as bench:fleet-stall compares).
   */
  constructor(
    private readonly url: string,
    private readonly options: Record<string, unknown>,
    readonly inlineBytes = INLINE_BYTES,
  ) {}

  /** Reads and checks the row `id` on the checker's thread. */
  async check(id: string): Promise<CheckAnswer> {
    await this.start();
    const w = this.worker;
    if (w === null) return { error: 'the row checker stopped' };
    const n = ++this.seq;
    return new Promise((resolve) => {
      this.waiting.set(n, resolve);
      w.postMessage({ n, id });
    });
  }

  private start(): Promise<void> {
    this.ready ??= new Promise<void>((resolve) => {
      const w = new Worker(new URL('./row-check-worker.js', import.meta.url), { workerData: { url: this.url, options: this.options } });
      w.unref();
      this.worker = w;
      w.on('message', (m: { n: number } & CheckAnswer) => {
        if (m.n === 0) return resolve();
        const done = this.waiting.get(m.n);
        this.waiting.delete(m.n);
        done?.(m);
      });
      const fail = (e?: unknown) => {
        this.worker = null;
        this.ready = null; // made anew at the next large row
        resolve();
        for (const [n, done] of this.waiting) {
          this.waiting.delete(n);
          done({ error: `the row checker's thread ended (${String((e as Error)?.message ?? e ?? 'exit')})` });
        }
      };
      w.on('error', fail);
      w.on('exit', () => fail());
    });
    return this.ready;
  }

  close(): void {
    const w = this.worker;
    this.worker = null;
    void w?.terminate();
  }
}
