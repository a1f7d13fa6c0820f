/**
 * The per-request and per-forward log lines, on the fast path: pino costs microseconds per line
 * (object walk, redaction, generic serialization), which at one line per request is a large
 * share of a rejection's cost. These lines have fixed fields, so they are built by string
 * concatenation (client-provided text is escaped with JSON.stringify) and written to pino's own
 * destination: the same stream, the same format as pino's lines, in order with them.
 */
import { pino, type Logger } from 'pino';

type Level = 'debug' | 'info' | 'warn' | 'error';
const LEVEL_VALUE: Record<Level, number> = { debug: 20, info: 30, warn: 40, error: 50 };

export class FastLog {
  private readonly stream: { write(s: string): unknown };
  private readonly min: number;
  private readonly pid: string;

  constructor(readonly logger: Logger) {
    this.stream = (logger as unknown as Record<symbol, { write(s: string): unknown }>)[pino.symbols.streamSym]!;
    this.min = logger.levelVal;
    this.pid = String(process.pid);
  }

  enabled(level: Level): boolean {
    return LEVEL_VALUE[level] >= this.min;
  }

  /** `fields` is a pre-serialized run of `"key":value` pairs (no leading comma). */
  write(level: Level, fields: string, msg: string): void {
    this.stream.write('{"level":"' + level + '","time":' + Date.now() + ',"pid":' + this.pid + ',' + fields + ',"msg":"' + msg + '"}\n');
  }
}

/** A JSON string literal for text that may come from a client (bounded). */
export function quote(s: string, max = 200): string {
  return JSON.stringify(s.length > max ? s.slice(0, max) : s);
}
