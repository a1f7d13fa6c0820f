/**
 * The metric primitives, kept off the hot path: counters and histograms are plain numbers and
 * Float64Arrays in children bound once per label set (no label strings built per request, no
 * prom-client call per request), turned into prom-client's JSON form at a scrape.
 */
import type { MetricJSON, MetricValue } from './json.js';

export type Labels = Record<string, string | number>;

/** Latency buckets in seconds, from 25 µs: the fast path lives below a millisecond. */
export const LATENCY_BUCKETS = [0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export class FastHistogram {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(v: number): void {
    const b = this.bounds;
    for (let i = 0; i < b.length; i++) {
      if (v <= b[i]!) {
        this.counts[i]!++;
        break;
      }
    }
    this.sum += v;
    this.count++;
  }
}

export class Family<T> {
  readonly children = new Map<string, { labels: Labels; child: T }>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly make: () => T,
  ) {}

  /** Binds a child once (at start-up or first use); the hot path keeps the returned object. */
  child(labels: Labels): T {
    const key = Object.values(labels).join('\u0000');
    let c = this.children.get(key);
    if (c === undefined) {
      c = { labels, child: this.make() };
      this.children.set(key, c);
    }
    return c.child;
  }
}

export class Counter {
  value = 0;
  inc(n = 1): void {
    this.value += n;
  }
}

export function counterJSON(f: Family<Counter>, aggregator: MetricJSON['aggregator'] = 'sum', type: 'counter' | 'gauge' = 'counter'): MetricJSON {
  return { name: f.name, help: f.help, type, aggregator, values: [...f.children.values()].map(({ labels, child }) => ({ labels, value: child.value })) };
}

export function histogramJSON(f: Family<FastHistogram>): MetricJSON {
  const values: MetricValue[] = [];
  for (const { labels, child } of f.children.values()) {
    let acc = 0;
    child.bounds.forEach((le, i) => {
      acc += child.counts[i]!;
      values.push({ labels: { ...labels, le }, value: acc, metricName: `${f.name}_bucket` });
    });
    values.push({ labels: { ...labels, le: '+Inf' }, value: child.count, metricName: `${f.name}_bucket` });
    values.push({ labels, value: child.sum, metricName: `${f.name}_sum` });
    values.push({ labels, value: child.count, metricName: `${f.name}_count` });
  }
  return { name: f.name, help: f.help, type: 'histogram', aggregator: 'sum', values };
}

/** A family of counters (or gauges: a Counter's value is set as well as incremented). */
export function counters(name: string, help: string): Family<Counter> {
  return new Family(name, help, () => new Counter());
}

/** A family of latency histograms (LATENCY_BUCKETS, or the buckets given). */
export function histograms(name: string, help: string, buckets: readonly number[] = LATENCY_BUCKETS): Family<FastHistogram> {
  return new Family(name, help, () => new FastHistogram(buckets));
}
