/**
 * The families built from a set of declarations (catalog.ts), by the same keys, and each one in
 * prom-client's JSON form for a snapshot.
 */
import type { FamilyDecl } from './catalog.js';
import { type Counter, counterJSON, counters, type Family, type FastHistogram, histogramJSON, histograms } from './families.js';
import type { MetricJSON } from './json.js';

/** The families of a set of declarations, by the same keys: a histogram's children are FastHistograms, any other's Counters. */
export type Families<D extends Record<string, FamilyDecl>> = {
  readonly [K in keyof D]: D[K]['type'] extends 'histogram' ? Family<FastHistogram> : Family<Counter>;
};

export function buildFamilies<D extends Record<string, FamilyDecl>>(decls: D): Families<D> {
  const out: Record<string, Family<Counter> | Family<FastHistogram>> = {};
  for (const [key, d] of Object.entries(decls)) out[key] = d.type === 'histogram' ? histograms(d.name, d.help, d.buckets) : counters(d.name, d.help);
  return out as Families<D>;
}

/** A family built by buildFamilies from `d`, in prom-client's JSON form. */
export function familyJSON(f: Family<Counter> | Family<FastHistogram>, d: FamilyDecl): MetricJSON {
  return d.type === 'histogram' ? histogramJSON(f as Family<FastHistogram>) : counterJSON(f as Family<Counter>, d.aggregator, d.type);
}
