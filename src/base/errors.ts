/**
 * Answers as values: an Exit is a status, a reason and the serialized JSON-RPC tail, built once.
 * Every rejection of the reasons table (reasons.ts) is serialized at start-up, so the reject
 * path allocates only the final string concatenation with the request id and captures no stack.
 */
import { quote } from '../log/log-line.js';
import { outcomeOf, REASON_NAMES, REASONS, type Reason, type SubmissionOutcome } from './reasons.js';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  304: 'Not Modified',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  421: 'Misdirected Request',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** The HTTP status line uWS wants (`"413 Payload Too Large"`), built once per status. */
const STATUS_LINES = new Map<number, string>();
export function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_TEXT[status] ?? 'Unknown'}`;
    STATUS_LINES.set(status, line);
  }
  return line;
}

/** An answer header: text, or its bytes encoded once (what the answer writer hands uWS as is, http/write.ts). */
export type Header = readonly [name: string | Uint8Array, value: string | Uint8Array];

/**
 * The outcome of a request: a stage either passes its context on or returns an Exit.
 * `tail` is the serialized JSON after the id: `,"result":…}` or `,"error":{…}}`, so the body
 * is `{"jsonrpc":"2.0","id":` + id + tail — one concatenation per response.
 */
export class Exit {
  private detailQuoted: string | null = null;
  private statusTail: string | null = null;
  private outcomeName: SubmissionOutcome | null = null;

  constructor(
    readonly status: number,
    /** `ok` for a result, else the rejection reason (or an upstream pass-through). */
    readonly reason: Reason | 'ok',
    readonly tail: string,
    readonly headers: readonly Header[] | undefined = undefined,
    /** A short human-readable detail for logs (never secrets). */
    readonly detail: string | undefined = undefined,
  ) {}

  body(idJson: string): string {
    return '{"jsonrpc":"2.0","id":' + idJson + this.tail;
  }

  /**
   * The body for a transport with no status line (a WebSocket frame): an error's `data` carries
   * `status`, the HTTP status the same answer gets over HTTP, beside `reason` (docs/design.md §4.5). Built
   * once per Exit: the preallocated rejections pay for it once.
   */
  bodyWithStatus(idJson: string): string {
    return '{"jsonrpc":"2.0","id":' + idJson + (this.statusTail ??= withStatus(this.tail, this.status));
  }

  /** What the answer means for the submission (reasons.ts outcomeOf), looked up once per Exit: the request log's message. */
  get outcome(): SubmissionOutcome {
    return (this.outcomeName ??= outcomeOf(this.reason));
  }

  /** This answer with `extra` headers after its own (a new Exit: many are shared). */
  withHeaders(extra: readonly Header[]): Exit {
    return new Exit(this.status, this.reason, this.tail, this.headers === undefined ? extra : [...this.headers, ...extra], this.detail);
  }

  /** `detail` as a JSON string literal for a log line (bounded), quoted once per Exit: many are reused. */
  detailJson(): string | null {
    if (this.detail === undefined) return null;
    return (this.detailQuoted ??= quote(this.detail));
  }
}

/**
 * `tail` with `"status":<status>` first in the error's `data` (every error this service builds
 * has a data object; a message is JSON-escaped, so `"data":{` cannot occur inside it).
 */
function withStatus(tail: string, status: number): string {
  if (!tail.startsWith(',"error":')) return tail;
  const at = tail.indexOf('"data":{');
  if (at < 0) return tail.slice(0, -2) + ',"data":{"status":' + status + '}}}';
  const open = at + 8;
  return tail.slice(0, open) + '"status":' + status + (tail[open] === '}' ? '' : ',') + tail.slice(open);
}

function errorTail(code: number, message: string, data: Record<string, unknown>): string {
  return ',"error":' + JSON.stringify({ code, message, data }) + '}';
}

/** The reasons that are no refusal of the request: the gate failed to answer it (a bug), or its client left first. */
export const FAILURES = ['internal_error', 'client_closed'] as const satisfies readonly Reason[];
export type Failure = (typeof FAILURES)[number];
/** The reasons the gate refuses a request with (every other). */
export type Refusal = Exclude<Reason, Failure>;

const preallocated = <R extends Reason>(names: readonly R[]): { readonly [K in R]: Exit } =>
  Object.freeze(
    Object.fromEntries(
      names.map((r) => {
        const s = REASONS[r];
        return [r, new Exit(s.status, r, errorTail(s.code, s.message, { reason: r }))];
      }),
    ) as { [K in R]: Exit },
  );

/** Preallocated refusals with the table's message: the hot refusal path allocates nothing. */
export const REJECT = preallocated(REASON_NAMES.filter((r): r is Refusal => !(FAILURES as readonly string[]).includes(r)));
/** Preallocated failures (FAILURES), as REJECT's refusals. */
export const FAIL = preallocated<Failure>(FAILURES);

/** A rejection with a specific message (e.g. which field of a transaction is wrong) and extra data. */
export function reject(reason: Reason, message?: string, data?: Record<string, unknown>, headers?: readonly Header[]): Exit {
  const s = REASONS[reason];
  const msg = message === undefined ? s.message : message;
  return new Exit(s.status, reason, errorTail(s.code, msg, data === undefined ? { reason } : { reason, ...data }), headers, message);
}

/** A JSON-RPC success with a string result (chain id, tx hash). The result is hex: no escaping needed. */
export function result(value: string, headers?: readonly Header[]): Exit {
  return new Exit(200, 'ok', ',"result":"' + value + '"}', headers);
}

const METHOD_NOT_FOUND = -32601;
/** What an upstream -32601 means, beside the sequencer's own words (docs/conditional.md, Answers). */
const SEQUENCER_LACKS_METHOD =
  "the chain's sequencer does not serve this method (its -32601, passed on as it came): txgate serves it and forwarded the call; nothing was taken. The deployment turns the method off for a chain whose sequencers lack it, or points the chain at one that serves it";

/** The sequencer's own JSON-RPC error, passed through with HTTP 200 (docs/design.md §5.3). */
export function upstreamRejected(code: number, message: string, upstreamData?: unknown): Exit {
  const data: Record<string, unknown> = { reason: 'upstream_rejected' };
  if (upstreamData !== undefined) data.upstream = upstreamData;
  // -32601 from a sequencer is not txgate's method_not_found (a 400 naming the setting): say whose it is.
  if (code === METHOD_NOT_FOUND) {
    data.from = 'sequencer';
    data.detail = SEQUENCER_LACKS_METHOD;
  }
  // The sequencer's data is passed on as it came, unless it cannot be written again (nested
  // past the serializer's depth): then without it, never a throw.
  let body = safeJson({ code, message, data });
  if (body === undefined) {
    delete data.upstream;
    body = JSON.stringify({ code, message, data });
  }
  return new Exit(200, 'upstream_rejected', ',"error":' + body + '}', undefined, message);
}

/** JSON.stringify that never throws (a value nested past the stack's depth): undefined instead. */
export function safeJson(v: unknown): string | undefined {
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}
