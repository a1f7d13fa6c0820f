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
}

export class Readiness {
  listening = false;
  draining = false;
  private readonly checks: ReadinessCheck[] = [];
  private readonly warningChecks: ReadinessCheck[] = [];

  add(check: ReadinessCheck): this {
    this.checks.push(check);
    return this;
  }

  /** A check whose finding is said on /ready (`warnings`) without making it 503. */
  warn(check: ReadinessCheck): this {
    this.warningChecks.push(check);
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
    return readinessReport(this.problems(), this.warnings());
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

/** The /ready answer for these problems and warnings (one thread's, or every thread's merged). */
export function readinessReport(notReady: readonly string[], warnings: readonly string[]): ReadinessReport {
  const w = warnings.length === 0 ? {} : { warnings };
  return notReady.length === 0
    ? { ready: true, body: JSON.stringify({ status: 'ready', ...w }), ...w }
    : { ready: false, body: JSON.stringify({ status: 'not_ready', notReady, ...w }), notReady, ...w };
}
