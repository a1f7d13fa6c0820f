/**
 * pino, JSON to stdout by default. API keys are never logged: nothing logs the X-Api-Key
 * header, and `redact` guards the paths where a key could still slip in by mistake.
 */
import { pino, type Logger, type DestinationStream } from 'pino';
import type { LogLevel } from './config.js';
import { LogSink } from './log-sink.js';

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
  if (opts.pretty === true) {
    // Colours only on a terminal: a redirected output gets plain text, no ANSI codes.
    const colorize = opts.colorize ?? process.stdout.isTTY === true;
    return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid' } } });
  }
  // Batched, asynchronous and bounded (see LogSink): if stdout cannot keep up (a stalled log
  // shipper), lines beyond the buffer are dropped and counted rather than growing memory
  // without limit or blocking the event loop.
  return pino(base, stdoutSink());
}

let sink: LogSink | null = null;

/** The one stdout sink of the process (worker threads share the fd, each with its own sink). */
function stdoutSink(): LogSink {
  if (sink === null) {
    const s = (sink = new LogSink({ fd: 1, maxBytes: LOG_BUFFER_BYTES }));
    process.once('exit', () => s.flushSync());
  }
  return sink;
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
