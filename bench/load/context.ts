/** What every section of bench:load is given: the harness, the fixtures, the options and where lines go. */
import type { LoadFixtures } from './fixtures.js';
import type { Gate, Harness } from './harness.js';

export interface LoadContext {
  readonly h: Harness;
  readonly f: LoadFixtures;
  /** --full */
  readonly full: boolean;
  /** Throughput scenarios chosen with --scenarios (all without it). */
  readonly wantScenario: (name: string) => boolean;
  /** The txgate every section shares (the default configuration, stub 0). */
  readonly gate: Gate;
  /** A line of the report: printed, and kept for load.md. */
  readonly say: (line: string) => void;
}

/** The range of the rounds' ratios, for a table cell. */
export const spread = (ratios: number[]) => (ratios.length > 1 ? `${Math.min(...ratios)}–${Math.max(...ratios)}` : '—');
