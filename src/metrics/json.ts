/**
 * Metrics as prom-client's getMetricsAsJSON gives them: what each thread's Metrics snapshot is,
 * and what the internal listener aggregates and renders (a leaf module both sides import).
 */
export interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

export interface MetricJSON {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  values: MetricValue[];
  aggregator: 'sum' | 'max' | 'first' | 'omit';
}
