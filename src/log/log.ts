/**
 * pino, JSON to stdout by default. API keys are never logged: nothing logs the X-Api-Key
 * header, and `redact` guards the paths where a key could still slip in by mistake.
 */
import { pino, type Logger, type DestinationStream } from 'pino';
import { LogSink } from './log-sink.js';
import { isMainThread, parentPort } from 'node:worker_threads';
import { prettyFactory } from 'pino-pretty';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type { Logger };

/** Exact paths only (wildcards make every line slower); nothing logs these, this is a guard. */
export const REDACT_PATHS = ['apiKey', 'key', 'headers["x-api-key"]', 'req.headers["x-api-key"]'];

export interface LogOptions {
  readonly level: LogLevel;
  /** Human-readable lines (pino-pretty), for development. */
  readonly pretty?: boolean;
  /** Colours in pretty lines; default: whether stdout is a terminal (a worker thread is told by the main thread). */
  readonly colorize?: boolean;
  /** Where to write (tests capture lines here); default stdout, asynchronously. */
  readonly destination?: DestinationStream;
}

export function createLogger(opts: LogOptions): Logger {
  const base = {
    level: opts.level,
    base: { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    formatters: { level: (label: string) => ({ level: label }) },
  };
  if (opts.destination !== undefined) return pino(base, opts.destination);
  // Batched, asynchronous and bounded (see LogSink): if stdout cannot keep up (a stalled log
  // shipper), lines beyond the buffer are dropped, counted and reported rather than growing
  // memory without limit or blocking the event loop. One writer per process: a worker thread's
  // lines go to the main thread's sink, whole.
  if (opts.pretty === true) {
    // Human-readable lines, made on this thread and written by the same sink (colours only on a
    // terminal: a redirected output gets plain text, no ANSI codes).
    const colorize = opts.colorize ?? process.stdout.isTTY === true;
    const prettify = prettyFactory({ colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid' });
    const sink = stdoutSink(prettify);
    return pino(base, { write: (line: string) => sink.write(prettify(line)) });
  }
  return pino(base, stdoutSink());
}

let sink: LogSink | null = null;

/** What a worker thread posts to the main thread: a batch of whole lines for stdout. */
export interface WorkerLogBatch {
  readonly kind: 'log';
  readonly text: string;
}

/**
 * The one stdout sink of the thread: on the main thread it writes to stdout; on a worker thread
 * it hands its batches to the main thread (`acceptWorkerLog` there), so one writer per process.
 */
function stdoutSink(format?: (jsonLine: string) => string): LogSink {
  if (sink === null) {
    const port = isMainThread ? null : parentPort;
    const forward = port === null ? undefined : (text: string) => port.postMessage({ kind: 'log', text } satisfies WorkerLogBatch);
    const s = (sink = new LogSink({
      fd: 1,
      maxBytes: LOG_BUFFER_BYTES,
      ...(forward !== undefined ? { forward } : {}),
      ...(format !== undefined ? { format } : {}),
    }));
    process.once('exit', () => s.flushSync());
  }
  return sink;
}

/**
 * On the main thread: writes a worker thread's batch of log lines with its own (true), or
 * returns false for any other message.
 */
export function acceptWorkerLog(m: unknown): boolean {
  if (typeof m !== 'object' || m === null || (m as { kind?: unknown }).kind !== 'log') return false;
  const text = (m as WorkerLogBatch).text;
  if (typeof text === 'string' && text.length > 0) stdoutSink().write(text);
  return true;
}

/** The most log bytes buffered for stdout before lines are dropped. */
export const LOG_BUFFER_BYTES = 16 * 1024 * 1024;

/**
 * Lets the batched log lines reach stdout, then calls `done`; after `maxMs` at most, so a
 * stalled stdout cannot hold up an exit or a worker's drain.
 */
export function flushLogs(log: Logger, done: () => void, maxMs = 1000): void {
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    clearTimeout(t);
    done();
  };
  const t = setTimeout(once, maxMs);
  log.flush(() => once());
}

/** Lines dropped because stdout could not keep up (exported as a metric). */
export function droppedLogLines(): number {
  return sink?.dropped ?? 0;
}
