/**
 * Readiness: 200 once configuration is loaded and the listener is up, 503 while starting or
 * draining, and 503 while any registered check (account store, sequencer health) reports a
 * problem. The body names what is not ready, never a secret.
 */
export type ReadinessCheck = () => string | null;

export interface ReadinessReport {
  readonly ready: boolean;
  readonly body: string;
  /** What is not ready (the body's `notReady`), when not ready. */
  readonly notReady?: readonly string[];
  /** What is wrong without making the service unready (the body's `warnings`). */
  readonly warnings?: readonly string[];
  /** State said beside them, by name (the body's fields of those names; e.g. `expressLane`). */
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** A named part of /ready's detail: its state now, or null to say nothing. */
export type ReadinessDetail = () => unknown;

export class Readiness {
  listening = false;
  draining = false;
  private readonly checks: ReadinessCheck[] = [];
  private readonly warningChecks: ReadinessCheck[] = [];
  private readonly details: [string, ReadinessDetail][] = [];

  add(check: ReadinessCheck): this {
    this.checks.push(check);
    return this;
  }

  /** A check whose finding is said on /ready (`warnings`) without making it 503. */
  warn(check: ReadinessCheck): this {
    this.warningChecks.push(check);
    return this;
  }

  /** State said on /ready under `name` (never a secret), whatever the readiness. */
  describe(name: string, detail: ReadinessDetail): this {
    this.details.push([name, detail]);
    return this;
  }

  problems(): string[] {
    const p: string[] = [];
    if (this.draining) p.push('draining');
    else if (!this.listening) p.push('starting');
    for (const c of this.checks) {
      const problem = c();
      if (problem !== null) p.push(problem);
    }
    return p;
  }

  report(): ReadinessReport {
    return readinessReport(this.problems(), this.warnings(), this.detail());
  }

  detail(): Record<string, unknown> | undefined {
    let d: Record<string, unknown> | undefined;
    for (const [name, f] of this.details) {
      const v = f();
      if (v !== null && v !== undefined) (d ??= {})[name] = v;
    }
    return d;
  }

  warnings(): string[] {
    const w: string[] = [];
    for (const c of this.warningChecks) {
      const warning = c();
      if (warning !== null) w.push(warning);
    }
    return w;
  }
}

/** The /ready answer for these problems, warnings and detail (one thread's, or every thread's merged). */
export function readinessReport(notReady: readonly string[], warnings: readonly string[], detail?: Readonly<Record<string, unknown>>): ReadinessReport {
  const w = warnings.length === 0 ? {} : { warnings };
  const d = detail === undefined ? {} : { detail };
  return notReady.length === 0
    ? { ready: true, body: JSON.stringify({ status: 'ready', ...w, ...detail }), ...w, ...d }
    : { ready: false, body: JSON.stringify({ status: 'not_ready', notReady, ...w, ...detail }), notReady, ...w, ...d };
}
