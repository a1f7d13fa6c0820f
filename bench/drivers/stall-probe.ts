/**
 * A probe of one thread's stalls (benches only): a 1-ms timer on the thread; a gap between two
 * ticks longer than STALL_MS is a stall. For each, what the thread did meanwhile, from Linux's
 * /proc/self/task/<tid>/schedstat (nanoseconds on a CPU, nanoseconds runnable but waiting for one)
 * and the thread's GC pauses (perf_hooks 'gc' entries): a stall spent on a CPU outside GC is
 * JavaScript work; one spent waiting is the machine's other load (other threads, processes);
 * GC is GC. The event loop's delay (monitorEventLoopDelay) gives max and p99 alike.
 *
 * In process: `new StallProbe()`, `.start()`, `.report()`.
 * In another process (bench:fleet's edge): `node --import <dist>/bench/stall-probe.js cli.js`
 * with STALL_PROBE_FILE set: each SIGUSR2 writes the report since the last one to that file
 * (`{"seq":n,…}`) and starts a new window.
 */
import { openSync, readSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver, type IntervalHistogram } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const STALL_MS = 10;
/** The longest stalls kept per window. */
const KEEP = 5;

export interface Stall {
  /** When the gap began, ms after the window's start. */
  readonly atMs: number;
  /** The gap's length, ms. */
  readonly ms: number;
  /** Of it, on a CPU / runnable and waiting for a CPU / in GC pauses, ms (schedstat, perf_hooks). */
  readonly onCpuMs: number;
  readonly waitingMs: number;
  readonly gcMs: number;
}

export interface StallReport {
  readonly windowMs: number;
  readonly loopDelayMaxMs: number;
  readonly loopDelayP99Ms: number;
  /** Gaps over STALL_MS, and the summed time of each kind over them. */
  readonly stalls: number;
  readonly stallMs: number;
  readonly onCpuMs: number;
  readonly waitingMs: number;
  readonly gcMs: number;
  /** The most time one stall spent on a CPU (the thread's own work held it that long at most). */
  readonly longestOnCpuMs: number;
  /** GC pauses over the whole window (count, summed, longest). */
  readonly gcPauses: number;
  readonly gcTotalMs: number;
  readonly gcMaxMs: number;
  readonly longest: readonly Stall[];
}

/** [on-CPU ns, waiting ns] of the calling thread (Linux; zeros elsewhere). */
function schedReader(): () => [number, number] {
  const tid = isMainThread ? process.pid : null;
  if (tid === null) return () => [0, 0];
  let fd: number;
  try {
    fd = openSync(`/proc/self/task/${tid}/schedstat`, 'r');
  } catch {
    return () => [0, 0];
  }
  const buf = Buffer.alloc(128);
  return () => {
    const n = readSync(fd, buf, 0, buf.length, 0);
    const [run, wait] = buf.toString('latin1', 0, n).split(' ');
    return [Number(run), Number(wait)];
  };
}

const round = (x: number) => Math.round(x * 10) / 10;

export class StallProbe {
  private timer: NodeJS.Timeout | null = null;
  private readonly h: IntervalHistogram = monitorEventLoopDelay({ resolution: 1 });
  private readonly sched = schedReader();
  private last = 0;
  private lastSched: [number, number] = [0, 0];
  private since = 0;
  private stalls: Stall[] = [];
  private gcs: { start: number; end: number }[] = [];
  private readonly obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) this.gcs.push({ start: e.startTime, end: e.startTime + e.duration });
  });

  start(): this {
    this.obs.observe({ entryTypes: ['gc'] });
    this.h.enable();
    this.reset();
    this.timer = setInterval(() => this.tick(), 1);
    this.timer.unref();
    return this;
  }

  reset(): void {
    this.h.reset();
    this.stalls = [];
    this.gcs = [];
    this.since = performance.now();
    this.last = this.since;
    this.lastSched = this.sched();
  }

  private tick(): void {
    const now = performance.now();
    const s = this.sched();
    const gap = now - this.last;
    if (gap > STALL_MS) {
      let gc = 0;
      for (const g of this.gcs) gc += Math.max(0, Math.min(g.end, now) - Math.max(g.start, this.last));
      this.stalls.push({
        atMs: this.last - this.since,
        ms: gap,
        onCpuMs: (s[0] - this.lastSched[0]) / 1e6,
        waitingMs: (s[1] - this.lastSched[1]) / 1e6,
        gcMs: gc,
      });
    }
    this.last = now;
    this.lastSched = s;
  }

  report(): StallReport {
    this.tick();
    const sum = (f: (s: Stall) => number) => round(this.stalls.reduce((a, s) => a + f(s), 0));
    const gcTotal = this.gcs.reduce((a, g) => a + g.end - g.start, 0);
    const gcMax = this.gcs.reduce((a, g) => Math.max(a, g.end - g.start), 0);
    return {
      windowMs: Math.round(performance.now() - this.since),
      loopDelayMaxMs: round(this.h.max / 1e6),
      loopDelayP99Ms: round(this.h.percentile(99) / 1e6),
      stalls: this.stalls.length,
      stallMs: sum((s) => s.ms),
      onCpuMs: sum((s) => s.onCpuMs),
      waitingMs: sum((s) => s.waitingMs),
      gcMs: sum((s) => s.gcMs),
      longestOnCpuMs: round(this.stalls.reduce((a, s) => Math.max(a, s.onCpuMs), 0)),
      gcPauses: this.gcs.length,
      gcTotalMs: round(gcTotal),
      gcMaxMs: round(gcMax),
      longest: [...this.stalls]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, KEEP)
        .map((s) => ({ atMs: Math.round(s.atMs), ms: round(s.ms), onCpuMs: round(s.onCpuMs), waitingMs: round(s.waitingMs), gcMs: round(s.gcMs) })),
    };
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.h.disable();
    this.obs.disconnect();
  }
}

// Preloaded into another process (--import) with STALL_PROBE_FILE: SIGUSR2 dumps and restarts.
const file = process.env.STALL_PROBE_FILE;
if (file !== undefined && file !== '' && isMainThread && process.argv[1] !== undefined && !process.argv[1].endsWith('stall-probe.js')) {
  const probe = new StallProbe().start();
  let seq = 0;
  process.on('SIGUSR2', () => {
    const r = probe.report();
    probe.reset();
    writeFileSync(file, JSON.stringify({ seq: ++seq, ...r }));
  });
}
