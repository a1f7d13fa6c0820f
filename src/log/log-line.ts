/**
 * Log lines with fixed fields, built on the fast path: pino costs microseconds per line (object
 * walk, redaction, generic serialization), which at one line per request is a large share of a
 * rejection's cost. A line here is one string built field by field (no object, no serializer)
 * and written to pino's own destination: the same stream and format as pino's lines, in order
 * with them. Text that may come from a client or a sequencer is escaped and bounded; everything
 * else written with `str` is known not to need escaping (ids, hex, names from fixed sets).
 */
import { pino, type Logger } from 'pino';

export type Level = 'debug' | 'info' | 'warn' | 'error';
const LEVEL_VALUE: Record<Level, number> = { debug: 20, info: 30, warn: 40, error: 50 };

/** One line being built: `fast.line('info')?.str('reqId', id).json('status', 200).end('request')`. */
export class LogLine {
  /**
   * The last field written is a string whose closing quote is not written yet: the next field's
   * prefix (or the end) writes it, `","key":"` in one piece, so that a string field costs the
   * line one concatenation fewer (bench:alloc: the request and audit lines' intermediate strings).
   */
  constructor(
    private readonly stream: { write(s: string): unknown },
    /** `{"level":…,"time":…,"pid":…` then `,"key":value` per field. */
    public s = '',
    private open = false,
  ) {}

  /** A string that needs no escaping. */
  str(key: string, v: string): this {
    this.s += (this.open ? prefixes(key).openStr : prefixes(key).str) + v;
    this.open = true;
    return this;
  }

  /** Text from outside (a client, a sequencer): escaped, cut at `max` characters. */
  text(key: string, v: string, max = 200): this {
    this.s += (this.open ? prefixes(key).openJson : prefixes(key).json) + quote(v, max);
    this.open = false;
    return this;
  }

  /** A number, a boolean, or a value already serialized as JSON. */
  json(key: string, v: string | number | boolean): this {
    this.s += (this.open ? prefixes(key).openJson : prefixes(key).json) + v;
    this.open = false;
    return this;
  }

  /**
   * Fields as one piece whose last is a string left open (`,"a":1,"key":"`), then that string's
   * text, which needs no escaping: `fields` and `str` in one concatenation.
   */
  strAfter(p: Piece, v: string): this {
    this.s += (this.open ? p.open : p.closed) + v;
    this.open = true;
    return this;
  }

  /** Fields as one piece ending in a key (`,"a":1,"key":`), then that key's value, a number or JSON text: `fields` and `json` in one concatenation. */
  jsonAfter(p: Piece, v: string | number): this {
    this.s += (this.open ? p.open : p.closed) + v;
    this.open = false;
    return this;
  }

  /** Fields written as one piece of JSON text (`piece`): constant for the line's kind, built once by its writer. */
  fields(p: Piece): this {
    this.s += this.open ? p.open : p.closed;
    this.open = false;
    return this;
  }

  end(msg: string): void {
    const tail = ends(msg);
    this.stream.write(this.s + (this.open ? tail.open : tail.closed));
    this.s = '';
    this.open = false;
  }
}

/** Whole fields as JSON text, `,"key":value…` (a comma first, the last value closed), in both forms a line needs: after a closed field, and after an open string. */
export interface Piece {
  readonly closed: string;
  readonly open: string;
}
/** `text`: fields `,"key":value…` whose keys and values need no escaping (the writer's own, or JSON already). */
export const piece = (text: string): Piece => ({ closed: text, open: '"' + text });

/**
 * A piece per key, its text built once by `text` and kept, for fields that repeat from one line to
 * the next; at most `kept` keys (past them each call builds its own), so a key a peer could vary
 * never grows it without bound.
 */
export function piecesBy<K>(text: (key: K) => string, kept = 256): (key: K) => Piece {
  const pieces = new Map<K, Piece>();
  return (key) => {
    let p = pieces.get(key);
    if (p === undefined) {
      p = piece(text(key));
      if (pieces.size < kept) pieces.set(key, p);
    }
    return p;
  };
}

/**
 * A field's `,"key":"` and `,"key":`, each also after an open string (`","key":"`), built once
 * per key (the keys are the code's own, a few dozen): one concatenation per field instead of
 * four, each a string of its own (measured with bench:instr --top on the request log's line).
 */
interface Prefixes {
  readonly str: string;
  readonly json: string;
  readonly openStr: string;
  readonly openJson: string;
}
/** Keys and messages are the code's own; a bound all the same. */
const CACHED = 256;
const PREFIXES = new Map<string, Prefixes>();
function prefixes(key: string): Prefixes {
  let p = PREFIXES.get(key);
  if (p === undefined) {
    p = { str: ',"' + key + '":"', json: ',"' + key + '":', openStr: '","' + key + '":"', openJson: '","' + key + '":' };
    if (PREFIXES.size < CACHED) PREFIXES.set(key, p);
  }
  return p;
}
/** A line's end, `,"msg":"…"}` and a newline, after a closed field and after an open string: built once per message (a few fixed ones). */
const ENDS = new Map<string, { readonly closed: string; readonly open: string }>();
function ends(msg: string): { readonly closed: string; readonly open: string } {
  let e = ENDS.get(msg);
  if (e === undefined) {
    e = { closed: ',"msg":"' + msg + '"}\n', open: '","msg":"' + msg + '"}\n' };
    if (ENDS.size < CACHED) ENDS.set(msg, e);
  }
  return e;
}

/**
 * Milliseconds with up to three decimals as JSON text, from whole microseconds (what
 * `String(us / 1000)` gives for these values, without the general number printer a double's
 * conversion runs on every audit line).
 */
export function millisText(us: number): string {
  if (!(us >= 0 && us < 2 ** 31)) return String(us / 1000);
  const whole = (us / 1000) | 0;
  const frac = us - whole * 1000;
  return frac === 0 ? String(whole) : whole + FRACTIONS[frac]!;
}

/** A fraction of 1–999 thousandths as `.d`, `.dd` or `.ddd` (trailing zeros dropped, as String() writes it), built once: one string per line instead of three. */
const FRACTIONS = Array.from({ length: 1000 }, (_, f) =>
  f === 0 ? '' : f % 100 === 0 ? '.' + f / 100 : f % 10 === 0 ? (f < 100 ? '.0' : '.') + f / 10 : (f < 10 ? '.00' : f < 100 ? '.0' : '.') + f,
);

export class FastLog {
  private readonly min: number;
  /** The logger's bound fields: pid, and a worker thread's index. */
  private readonly pid: string;
  private readonly stream: { write(s: string): unknown };

  constructor(logger: Logger) {
    this.stream = (logger as unknown as Record<symbol, { write(s: string): unknown }>)[pino.symbols.streamSym]!;
    this.min = logger.levelVal;
    // The logger's bound fields as pino writes them (`,"pid":…` and a child's, e.g. `,"worker":0`).
    this.pid = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? ',"pid":' + process.pid;
  }

  /**
   * A new line at `level`, or null when that level is off (nothing is built then). A fresh
   * object, young like the strings stored in it: one kept for every line is old, and each field
   * stored into it paid the write barrier of an old object pointing at a young string (measured
   * with bench:instr --top).
   */
  line(level: Level): LogLine | null {
    return this.started(level) ? new LogLine(this.stream, this.head) : null;
  }

  /**
   * `line(level)` with its first field written, the request's id (`reqId`, which every request's
   * line starts with), in one concatenation: the start with `,"reqId":"` is kept as the start is.
   */
  lineOf(level: Level, reqId: string): LogLine | null {
    return this.lineAfter(level, REQ_ID, reqId);
  }

  /**
   * A new line whose first fields are the piece `p`, ending in a string left open, and that
   * string's text `v` (LogLine.strAfter), in one concatenation: the start with the last piece
   * asked for is kept as the start is (a writer's lines begin with the same piece: the request
   * line's reqId key, the audit line's head).
   */
  lineAfter(level: Level, p: Piece, v: string): LogLine | null {
    if (!this.started(level)) return null;
    if (this.headAfter === null || this.afterPiece !== p) {
      this.afterPiece = p;
      this.headAfter = this.head + p.closed;
    }
    return new LogLine(this.stream, this.headAfter + v, true);
  }

  /** Whether `level` is on; if so, `head` is this millisecond's start at that level. */
  private started(level: Level): boolean {
    if (LEVEL_VALUE[level] < this.min) return false;
    const ms = Date.now();
    if (ms !== this.headMs || level !== this.headLevel) {
      this.headMs = ms;
      this.headLevel = level;
      this.head = LEVEL_HEAD[level] + msText(ms) + this.pid;
      this.headAfter = null;
    }
    return true;
  }

  /**
   * The last line's start, `{"level":…,"time":…` and the bound fields, kept while its level and
   * millisecond are the next line's too (under load most lines are: no new string for it then).
   */
  private head = '';
  /** `head` and `afterPiece` (lineAfter), made the first time a line of this start asks for it. */
  private headAfter: string | null = null;
  private afterPiece: Piece | null = null;
  private headMs = -1;
  private headLevel: Level | null = null;
}

/** The request id's key, left open for the id (lineOf). */
const REQ_ID = piece(',"reqId":"');

/** `{"level":"…","time":` by level. */
const LEVEL_HEAD: Record<Level, string> = {
  debug: '{"level":"debug","time":',
  info: '{"level":"info","time":',
  warn: '{"level":"warn","time":',
  error: '{"level":"error","time":',
};

/**
 * A millisecond time as text, remembered while it is the same millisecond: past 2^31 it is a
 * double, whose conversion runs the general number printer on every line (bench:instr --top
 * shows it), and under load many lines share a millisecond.
 */
let lastMs = -1;
let lastMsText = '';
function msText(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastMsText = String(ms);
  }
  return lastMsText;
}

/** A JSON string literal for text that may come from a client (bounded). */
export function quote(s: string, max = 200): string {
  return JSON.stringify(s.length > max ? s.slice(0, max) : s);
}
