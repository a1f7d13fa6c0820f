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
  return pino(base, pino.destination({ dest: 1, sync: false }));
}
