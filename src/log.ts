/**
 * pino, JSON to stdout by default. API keys are never logged: nothing logs the X-Api-Key
 * header, and `redact` guards the paths where a key could still slip in by mistake.
 */
import { pino, type Logger, type DestinationStream } from 'pino';
import type { LogLevel } from './config.js';

export type { Logger };

/** Exact paths only (wildcards make every line slower); nothing logs these, this is a guard. */
export const REDACT_PATHS = ['apiKey', 'key', 'headers["x-api-key"]', 'req.headers["x-api-key"]'];

export interface LogOptions {
  readonly level: LogLevel;
  /** Human-readable lines (pino-pretty), for development. */
  readonly pretty?: boolean;
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
    return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid' } } });
  }
  // Asynchronous, and bounded: if stdout cannot keep up (a stalled log shipper), lines beyond
  // the buffer are dropped and counted rather than growing memory without limit or blocking
  // the event loop.
  const dest = pino.destination({ dest: 1, sync: false, maxLength: LOG_BUFFER_BYTES });
  dest.on('drop', (data: string) => {
    droppedLogLines += countLines(data);
  });
  return pino(base, dest);
}

/** The most log bytes buffered for stdout before lines are dropped. */
export const LOG_BUFFER_BYTES = 16 * 1024 * 1024;

/** Lines dropped because stdout could not keep up (exported as a metric). */
export let droppedLogLines = 0;

function countLines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n || 1;
}
