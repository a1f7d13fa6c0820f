/**
 * Garbage-collection pauses inside a measured process, on the same clock as the requests.
 *
 * `gcObserverSource(out)` is a CommonJS preload (`node --require FILE`): `--require` also runs
 * in every worker thread, where txgate serves requests (an `--import` preload does not on Node
 * 20). It observes perf_hooks 'gc' entries in each thread and, when that thread ends (txgate's
 * drain lets its workers end normally), appends them to `out` as JSON lines, one per pause:
 * `{"thread":N,"at":EPOCH_MS,"ms":DURATION,"kind":"minor"|"major"|"incremental"|"weakcb"}`.
 * Nothing is written while the thread serves. `at` is `performance.timeOrigin + startTime`, the
 * clock the rate probe (rate-probe.ts) stamps its requests with.
 */
import { existsSync, readFileSync } from 'node:fs';

export interface GcPause {
  readonly thread: number;
  /** Start, ms since the epoch (sub-millisecond). */
  readonly at: number;
  /** Duration, ms. */
  readonly ms: number;
  readonly kind: 'minor' | 'major' | 'incremental' | 'weakcb' | 'other';
}

export function gcObserverSource(out: string): string {
  return `'use strict';
const { PerformanceObserver, performance, constants } = require('node:perf_hooks');
const { threadId } = require('node:worker_threads');
const { appendFileSync } = require('node:fs');
const kinds = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' };
const seen = [];
const origin = performance.timeOrigin;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) seen.push(origin + e.startTime, e.duration, (e.detail && e.detail.kind) || e.kind);
}).observe({ entryTypes: ['gc'] });
process.on('exit', () => {
  let text = '';
  for (let i = 0; i < seen.length; i += 3) text += JSON.stringify({ thread: threadId, at: seen[i], ms: seen[i + 1], kind: kinds[seen[i + 2]] || 'other' }) + '\\n';
  if (text !== '') appendFileSync(${JSON.stringify(out)}, text);
});
`;
}

/**
 * The pauses of the threads that serve: txgate serves from worker threads (each its own heap,
 * so the main thread's collections stop none of them); if no worker thread recorded any, all.
 */
export function readGc(file: string): GcPause[] {
  if (!existsSync(file)) return [];
  const all = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as GcPause);
  const workers = all.filter((p) => p.thread !== 0);
  return workers.length > 0 ? workers : all;
}

/** One request as the rate probe recorded it: when it was due (epoch ms) and its latency (µs). */
export interface Sample {
  readonly at: number;
  readonly us: number;
}

export interface GcReport {
  /** Pauses that started within the measured window. */
  readonly minor: number;
  readonly major: number;
  /** Incremental marking steps and weak-callback passes. */
  readonly other: number;
  /** The longest pause of each kind, ms (0: none). */
  readonly longestMinorMs: number;
  readonly longestMajorMs: number;
  /** The requests at or beyond the p99.9 latency. */
  readonly tailRequests: number;
  /** Of those, how many were in flight during a pause of any kind, and during a major one. */
  readonly tailOverlappingGc: number;
  readonly tailOverlappingMajor: number;
  /** Every request (not only the tail) in flight during a major pause. */
  readonly requestsOverlappingMajor: number;
  /** The tail requests, slowest first, with the pauses they overlapped. */
  readonly tail: readonly { at: number; us: number; gc: readonly { kind: string; ms: number; startOffsetMs: number }[] }[];
}

/**
 * GC pauses against the requests of one run: counts and longest pauses within the window, and
 * which of the slowest 0.1% were in flight (due → answered) while a pause ran.
 */
export function gcAgainst(pauses: readonly GcPause[], samples: readonly Sample[], p999Us: number): GcReport {
  let from = Infinity;
  let to = -Infinity;
  for (const s of samples) {
    from = Math.min(from, s.at);
    to = Math.max(to, s.at + s.us / 1000);
  }
  const inRun = pauses.filter((p) => p.at + p.ms >= from && p.at <= to);
  const overlaps = (s: Sample, p: GcPause) => p.at < s.at + s.us / 1000 && p.at + p.ms > s.at;
  const majors = inRun.filter((p) => p.kind === 'major');
  const minors = inRun.filter((p) => p.kind === 'minor');
  const tail = samples.filter((s) => s.us >= p999Us).sort((a, b) => b.us - a.us);
  const tailRows = tail.map((s) => ({
    at: s.at,
    us: Math.round(s.us),
    gc: inRun
      .filter((p) => overlaps(s, p))
      .map((p) => ({ kind: p.kind, ms: Math.round(p.ms * 1000) / 1000, startOffsetMs: Math.round((p.at - s.at) * 1000) / 1000 })),
  }));
  return {
    minor: minors.length,
    major: majors.length,
    other: inRun.length - minors.length - majors.length,
    longestMinorMs: Math.round(Math.max(0, ...minors.map((p) => p.ms)) * 1000) / 1000,
    longestMajorMs: Math.round(Math.max(0, ...majors.map((p) => p.ms)) * 1000) / 1000,
    tailRequests: tail.length,
    tailOverlappingGc: tailRows.filter((r) => r.gc.length > 0).length,
    tailOverlappingMajor: tailRows.filter((r) => r.gc.some((g) => g.kind === 'major')).length,
    requestsOverlappingMajor: samples.filter((s) => majors.some((p) => overlaps(s, p))).length,
    tail: tailRows,
  };
}
