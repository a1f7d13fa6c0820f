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
}

export class Readiness {
  listening = false;
  draining = false;
  private readonly checks: ReadinessCheck[] = [];

  add(check: ReadinessCheck): this {
    this.checks.push(check);
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
    const notReady = this.problems();
    return notReady.length === 0
      ? { ready: true, body: '{"status":"ready"}' }
      : { ready: false, body: JSON.stringify({ status: 'not_ready', notReady }), notReady };
  }
}
