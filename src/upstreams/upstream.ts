/**
 * What every kind of upstream is to the rest of the service (a sequencer, the chain RPC): a
 * JSON-RPC endpoint whose `call` ends in exactly one Answer (a JSON-RPC result, a JSON-RPC error,
 * or a fault: transport error, timeout, 5xx, a body that is not JSON-RPC). A fault says whether
 * the request was written (`sent`: its bytes were handed to the socket): only then can the
 * outcome be uncertain, which the outcome rules (forward/attempts.ts) hinge on.
 *
 * A kind of upstream is a folder here with its `UpstreamKind` (the URL schemes it serves and how
 * it opens), listed in registry.ts. An upstream holds no health state: the sequencers' health is
 * the forward layer's (forward/sequencer.ts).
 */

export type Answer =
  | { readonly kind: 'result'; readonly result: unknown }
  | { readonly kind: 'error'; readonly code: number; readonly message: string; readonly data: unknown }
  /** `busy`: no connection to the sequencer was free in time (load, not an unreachable sequencer). */
  | { readonly kind: 'fault'; readonly why: string; readonly sent: boolean; readonly busy?: true };

export interface CallTimes {
  /** The answer's bound, from the moment the request is written. */
  readonly timeoutMs: number;
  /** How long the call may wait for a connection (ours, then the transport's connect) before it is written. */
  readonly queueMs: number;
  /**
   * Rather wait (within `queueMs`) for a connection that has answered before than open a fresh
   * one, where one exists: asking again about written bytes (forward/resolve.ts), which a fresh
   * connection to a sequencer at its connection limit would lose again. Over HTTP only.
   */
  readonly proven?: boolean;
}

/** One JSON-RPC endpoint: `call` ends in exactly one Answer, whose fault says whether the request was written. */
export interface Upstream {
  readonly url: string;
  /** scheme://host:port, safe to log (upstreamLabel). */
  readonly label: string;
  /** The label as a JSON string, for log lines. */
  readonly labelJson: string;
  call(method: string, paramsJson: string, times: CallTimes): Promise<Answer>;
  /** Calls not written end unsent; written ones are waited for, or cut (`abandon`). */
  close(abandon?: boolean): Promise<void>;
}

/** A chain's keep-warm settings as an upstream takes them (`chains[].forward.keepWarm`; keep-warm.ts). */
export interface KeepWarmOptions {
  /** A connection idle this long gets a probe; 0: keep-warm off. */
  readonly idleMs: number;
  /** The connections kept open and proven per sequencer client (per thread). */
  readonly connections: number;
}

/** How many calls an upstream carries at once, named. */
export interface OpenOptions {
  /** Calls written at once (over HTTP, a keep-alive connection each; over WebSocket, calls in flight). */
  readonly calls: number;
  /** Connections those calls share, for a kind that carries many calls on one (WebSocket). */
  readonly sockets: number;
  /** Connections kept open and proven through silences (keep-warm.ts); absent or `idleMs` 0: not. */
  readonly keepWarm?: KeepWarmOptions | undefined;
}

/** A kind of upstream: the URL schemes it serves (as `URL.protocol` gives them) and how it opens. */
export interface UpstreamKind {
  readonly schemes: readonly string[];
  open(url: string, options: OpenOptions): Upstream;
}

/** The answer of a call that got no connection in time: never written. */
export function noConnection(times: CallTimes): Answer {
  return { kind: 'fault', why: `no connection to the sequencer within ${times.queueMs} ms`, sent: false, busy: true };
}

/** A label for an upstream that is safe to log and show: scheme://host:port, no credentials or path. */
export function upstreamLabel(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
}

/**
 * A parsed JSON-RPC answer (an HTTP body, a WebSocket frame): a result, an error with a numeric
 * code and a string message, or a fault for anything else. `where` names the carrier in a fault.
 */
export function classify(msg: unknown, where: string, resultAllowed = true): Answer {
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return { kind: 'fault', why: `${where} with a non-JSON-RPC body`, sent: true };
  const m = msg as Record<string, unknown>;
  if ('error' in m && typeof m.error === 'object' && m.error !== null) {
    const e = m.error as Record<string, unknown>;
    if (typeof e.code === 'number' && typeof e.message === 'string') return { kind: 'error', code: e.code, message: e.message, data: e.data };
    return { kind: 'fault', why: `${where} with a malformed JSON-RPC error`, sent: true };
  }
  if ('result' in m && resultAllowed) return { kind: 'result', result: m.result };
  return { kind: 'fault', why: `${where} without a JSON-RPC result`, sent: true };
}
