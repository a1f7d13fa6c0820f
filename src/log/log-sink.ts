/**
 * The stdout destination for log lines: batched, asynchronous, bounded.
 *
 * One `write(2)` per line is what made logging the largest cost after signature recovery (on a
 * loaded server each async write is a thread-pool hand-off, a system call and a completion
 * wake-up, for each of a submission's two lines; docs/performance.md has the load bench's figures).
 * Lines are appended to an in-memory batch instead, and the batch goes out in one write when it
 * reaches `batchBytes` or `flushMs` after its first line, whichever comes first. At most one
 * write is in flight (lines stay in order); what arrives meanwhile joins the next batch.
 *
 * Bounded: if stdout cannot keep up (a stalled log shipper), lines beyond `maxBytes` buffered
 * are dropped and counted (`dropped`) rather than growing memory or blocking the event loop, and
 * the next batch written starts with a line saying how many (`log lines dropped`). Lines are
 * dropped whole: a batch is written to its end, resuming partial writes, before the next starts.
 * `flushSync()` writes what is pending synchronously, for exit paths.
 *
 * Whole lines from every thread: one writer per process. In a worker thread the sink hands its
 * batches to the main thread (`forward`), whose sink writes them among its own: a pipe takes
 * writes of more than 4 KiB in pieces, and two threads each resuming their own would interleave
 * those pieces mid-line.
 */
import { write, writeSync } from 'node:fs';

export interface LogSinkOptions {
  /** File descriptor to write to (1 = stdout). */
  readonly fd: number;
  /** A batch goes out when it holds this many bytes (default 64 KiB). */
  readonly batchBytes?: number;
  /** ... or this long after its first line (default 20 ms). */
  readonly flushMs?: number;
  /** Most bytes held (pending + in flight) before new lines are dropped (default 16 MiB). */
  readonly maxBytes?: number;
  /** Instead of writing to `fd`, hand each batch here (a worker thread: to the main thread's sink). */
  readonly forward?: (batch: string) => void;
  /** Formats the line that reports dropped lines (default: as JSON; pretty output gives its own). */
  readonly format?: (jsonLine: string) => string;
}

export class LogSink {
  private readonly fd: number;
  private readonly batchBytes: number;
  private readonly flushMs: number;
  private readonly maxBytes: number;
  /** Lines not yet handed to write(2). Counted in string length (lines are JSON, mostly ASCII). */
  private pending: string[] = [];
  private pendingLen = 0;
  /** Length of the batch being written (0: none in flight; a batch is never empty). */
  private inFlightLen = 0;
  private timer: NodeJS.Timeout | null = null;
  /** `flush` callbacks, run once everything written so far has reached the descriptor. */
  private waiters: (() => void)[] = [];
  /** Lines dropped because the buffer was full or stdout failed. */
  dropped = 0;
  /** Dropped lines not yet reported by a line of their own. */
  private unreported = 0;
  private readonly forward: ((batch: string) => void) | undefined;
  private readonly format: ((jsonLine: string) => string) | undefined;
  /** A batch waiting to be resumed after EAGAIN (so an exit can finish it rather than tear its line). */
  private retry: { buf: Buffer; off: number } | null = null;

  constructor(o: LogSinkOptions) {
    this.fd = o.fd;
    this.forward = o.forward;
    this.format = o.format;
    this.batchBytes = o.batchBytes ?? 64 * 1024;
    this.flushMs = o.flushMs ?? 20;
    this.maxBytes = o.maxBytes ?? 16 * 1024 * 1024;
  }

  /** One or more whole lines, each ending in '\n' (pino's contract for a destination). */
  write(s: string): boolean {
    if (this.pendingLen + this.inFlightLen + s.length > this.maxBytes) {
      this.lost(countLines(s));
      return false;
    }
    this.pending.push(s);
    this.pendingLen += s.length;
    if (this.inFlightLen === 0) this.next(); // else the completion of the write in flight sends the rest
    return true;
  }

  /** Sends what is pending now (asynchronously); `cb` runs once it is written. */
  flush(cb?: (err?: Error) => void): void {
    if (cb !== undefined) this.waiters.push(cb);
    if (this.inFlightLen === 0) {
      if (this.pendingLen > 0) this.send();
      else this.release();
    }
  }

  /**
   * Writes what is pending synchronously (exit paths), waiting 1 s at most for a full pipe. A
   * batch a full pipe cut short is finished first, so the output never ends mid-line. While a
   * write is in the thread pool nothing can be written beside it: those lines are counted as
   * dropped instead. A worker thread's sink hands what is pending on.
   */
  flushSync(): void {
    this.clearTimer();
    if (this.forward !== undefined) {
      if (this.pendingLen > 0 || this.unreported > 0) this.forward(this.batch());
      return;
    }
    let buf: Buffer;
    if (this.retry !== null) {
      // A batch cut short by a full pipe: finish it (never leave half a line), then the rest.
      buf = Buffer.concat([this.retry.buf.subarray(this.retry.off), Buffer.from(this.batch())]);
      this.retry = null;
    } else if (this.inFlightLen > 0) {
      // A write is in the thread pool: writing beside it could interleave; count these as lost.
      if (this.pendingLen > 0) this.lost(countLines(this.take()));
      return;
    } else {
      if (this.pendingLen === 0 && this.unreported === 0) return;
      buf = Buffer.from(this.batch());
    }
    // A full non-blocking pipe: wait for the reader, 1 ms at a time, for 1 s at most.
    const wait = new Int32Array(new SharedArrayBuffer(4));
    const deadline = Date.now() + 1000;
    try {
      for (let off = 0; off < buf.length; ) {
        try {
          off += writeSync(this.fd, buf, off);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() > deadline) throw e;
          Atomics.wait(wait, 0, 0, 1);
        }
      }
    } catch {
      /* stdout is gone or stalled: nothing can be done for these lines */
    }
  }

  /** Lines that will not be written: counted, and reported by the next batch. */
  private lost(n: number): void {
    this.dropped += n;
    this.unreported += n;
  }

  /** With nothing in flight: send a full batch (or one a flush waits for), else arm the timer. */
  private next(): void {
    if (this.pendingLen === 0) this.release();
    else if (this.pendingLen >= this.batchBytes || this.waiters.length > 0) this.send();
    else if (this.timer === null) {
      this.timer = setTimeout(this.onTimer, this.flushMs);
      this.timer.unref();
    }
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    if (this.inFlightLen === 0 && this.pendingLen > 0) this.send();
  };

  private clearTimer(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  /** Everything is written: run the flush callbacks. */
  private release(): void {
    const w = this.waiters;
    if (w.length === 0) return;
    this.waiters = [];
    for (const cb of w) cb();
  }

  private take(): string {
    const s = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    this.pending = [];
    this.pendingLen = 0;
    return s;
  }

  /** What is pending, after a line reporting the lines dropped since the last such line. */
  private batch(): string {
    const text = this.take();
    if (this.unreported === 0) return text;
    const note = `{"level":"warn","time":${Date.now()},"pid":${process.pid},"dropped":${this.unreported},"msg":"log lines dropped: stdout could not keep up"}\n`;
    this.unreported = 0;
    return (this.format === undefined ? note : this.format(note)) + text;
  }

  private send(): void {
    this.clearTimer();
    const text = this.batch();
    if (this.forward !== undefined) {
      // Handed over whole and at once: nothing stays in flight here.
      this.forward(text);
      this.next();
      return;
    }
    this.inFlightLen = text.length;
    this.writeAt(Buffer.from(text), 0);
  }

  private writeAt(buf: Buffer, off: number): void {
    write(this.fd, buf, off, buf.length - off, null, (err, n) => {
      if (err !== null) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
          // A non-blocking pipe that is full: try again shortly.
          this.retry = { buf, off };
          setTimeout(() => {
            if (this.retry === null) return; // finished by an exit
            this.retry = null;
            this.writeAt(buf, off);
          }, 5).unref();
          return;
        }
        // EPIPE and the like: stdout is gone. Count what is lost and keep serving.
        this.lost(countLines(buf.toString('latin1', off)));
      } else if (off + n < buf.length) return this.writeAt(buf, off + n);
      this.inFlightLen = 0;
      this.next();
    });
  }
}

function countLines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n || 1;
}
