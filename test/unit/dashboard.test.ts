/**
 * The Grafana dashboard shipped in dashboards/txgate.json queries only what txgate exports: every
 * metric a query names is in the /metrics text rendered by txgate's own code (the service's
 * families from src/metrics/metrics.ts with every optional family on, and the process metrics of
 * src/http/internal.ts), every label it matches or groups by is one those series carry, and every
 * reason or outcome it matches is one txgate gives.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { StoreState } from '../../src/accounts/postgres/state.js';
import { parseConfig } from '../../src/config/config.js';
import { renderMetrics } from '../../src/http/internal.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { REASON_NAMES, SUBMISSION_OUTCOMES } from '../../src/base/reasons.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const root = join(import.meta.dirname, '..', '..', '..');
const dashboard = JSON.parse(readFileSync(join(root, 'dashboards', 'txgate.json'), 'utf8')) as {
  panels: Panel[];
  templating: { list: { name: string; type: string; definition?: string; query?: unknown }[] };
};
interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

/** Labels Prometheus adds at the scrape. */
const SCRAPE_LABELS = new Set(['instance', 'job']);

/** Metric name → the label names its series carry (empty for a family with no series yet). */
const exported = new Map<string, Set<string>>();

before(async () => {
  const config = parseConfig(
    {
      websocket: { enabled: true },
      listen: { tls: { enabled: true, certFile: 'c.pem', keyFile: 'k.pem' } },
      chains: [
        {
          chainId: DEV_CHAIN_ID,
          hosts: ['localhost'],
          sequencers: ['http://127.0.0.1:8547'],
          rpc: 'http://127.0.0.1:8545',
          sync: { enabled: true },
          track: { enabled: true },
        },
      ],
    },
    root,
    {},
  );
  const metrics = new Metrics(config, { version: '0.0.0-test', uws: 'test' });
  metrics.watchAccounts(StoreState.allocate());
  // Series bound when the front ends are built (HTTP and WebSocket), or on first use: a stage list, a WebSocket close, a reload.
  metrics.requestObserver('http').stages?.(['host', 'parse']);
  metrics.requestObserver('ws');
  metrics.wsTransport.opened();
  metrics.tls.certificate('*', 1);
  metrics.wsTransport.closed(1000);
  metrics.accountsReload('loaded', 1);
  const text = await renderMetrics([metrics.snapshot()]);
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type !== null) {
      const names =
        type[2] === 'histogram'
          ? ['_bucket', '_sum', '_count'].map((s) => type[1] + s)
          : type[2] === 'summary'
            ? ['', '_sum', '_count'].map((s) => type[1] + s)
            : [type[1]!];
      for (const n of names) if (!exported.has(n)) exported.set(n, new Set());
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? /.exec(line);
    if (sample === null) continue;
    const labels = exported.get(sample[1]!) ?? new Set<string>();
    for (const m of (sample[2] ?? '').matchAll(/(\w+)="/g)) labels.add(m[1]!);
    exported.set(sample[1]!, labels);
  }
});

function queries(): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  const walk = (ps: Panel[]) => {
    for (const p of ps) {
      for (const t of p.targets ?? []) out.push({ where: `panel "${p.title}"`, expr: t.expr });
      walk(p.panels ?? []);
    }
  };
  walk(dashboard.panels);
  for (const v of dashboard.templating.list)
    if (v.type === 'query' && v.definition !== undefined) out.push({ where: `variable $${v.name}`, expr: v.definition });
  return out;
}

/** The metrics a PromQL expression names (identifiers starting txgate_). */
const metricsIn = (expr: string) => [...expr.matchAll(/\b(txgate_[a-zA-Z0-9_:]*)/g)].map((m) => m[1]!);

/** Problems with one expression: unknown metrics, labels its metrics do not carry, reasons and outcomes txgate never gives. */
function problems(expr: string): string[] {
  const found: string[] = [];
  const names = metricsIn(expr);
  if (names.length === 0) found.push('names no txgate metric');
  for (const n of names) if (!exported.has(n)) found.push(`${n} is not exported`);
  const carried = new Set([...SCRAPE_LABELS, 'le', ...names.flatMap((n) => [...(exported.get(n) ?? [])])]);
  for (const m of expr.matchAll(/(txgate_\w+)\{([^}]*)\}/g)) {
    const own = exported.get(m[1]!);
    for (const [, label, , value] of m[2]!.matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)) {
      if (own !== undefined && own.size > 0 && !own.has(label!) && !SCRAPE_LABELS.has(label!)) found.push(`${m[1]} has no label ${label}`);
      if (label === 'reason' && !(REASON_NAMES as readonly string[]).includes(value!) && value !== 'ok') found.push(`no reason ${value}`);
      if (label === 'outcome' && m[1] === 'txgate_sync_calls_total' && !(SUBMISSION_OUTCOMES as readonly string[]).includes(value!))
        found.push(`no sync outcome ${value}`);
    }
  }
  // A family with no series yet (bound on first use: txgate_rate_limited_total) has unknown labels.
  const known = names.every((n) => (exported.get(n)?.size ?? 0) > 0);
  for (const m of known ? expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g) : [])
    for (const label of m[1]!.split(',').map((s) => s.trim()))
      if (label !== '' && !carried.has(label)) found.push(`grouped by ${label}, which none of ${names.join(', ')} carries`);
  for (const m of expr.matchAll(/label_values\((txgate_\w+),\s*(\w+)\)/g))
    if (!carried.has(m[2]!)) found.push(`label_values of ${m[2]}, not a label of ${m[1]}`);
  return found;
}

describe('dashboards/txgate.json', () => {
  it('every query names only metrics txgate exports, with labels and values they carry', () => {
    const all = queries();
    assert.ok(all.length >= 20, `queries found: ${all.length}`);
    const bad = all.flatMap((q) => problems(q.expr).map((p) => `${q.where}: ${p}\n    ${q.expr}`));
    assert.deepEqual(bad, []);
  });
  it('the check catches a misspelt metric, a label a metric lacks and an unknown reason', () => {
    assert.deepEqual(problems('sum(rate(txgate_request_total[5m]))'), ['txgate_request_total is not exported']);
    assert.match(problems('sum by (sequencer) (rate(txgate_requests_total[5m]))').join(), /grouped by sequencer/);
    assert.match(problems('rate(txgate_requests_total{reason="upstream_timeout"}[5m])').join(), /no reason upstream_timeout/);
    assert.match(problems('rate(txgate_forwards_total{account="a"}[5m])').join(), /txgate_forwards_total has no label account/);
  });
  it('covers requests by reason and transport, forward outcomes, uncertain answers, sync waits and store staleness', () => {
    const text = queries()
      .map((q) => q.expr)
      .join('\n');
    for (const needle of [
      /sum by \(reason\) \(rate\(txgate_requests_total/,
      /sum by \(transport, status\) \(rate\(txgate_requests_total/,
      /sum by \(chain, outcome\) \(rate\(txgate_forwards_total/,
      /txgate_requests_total\{[^}]*reason="upstream_error"/,
      /txgate_sync_wait_seconds_bucket/,
      /txgate_accounts_snapshot_age_seconds/,
      /txgate_inclusion_seconds_bucket/,
      /txgate_track_watcher_stalled/,
    ])
      assert.match(text, needle);
  });
  it('is a Grafana dashboard: a title, a uid, unique panel ids, a Prometheus datasource variable', () => {
    const d = dashboard as unknown as { title: string; uid: string; schemaVersion: number; panels: { id: number }[] };
    assert.equal(d.title, 'txgate');
    assert.match(d.uid, /^[\w-]{1,40}$/);
    assert.ok(d.schemaVersion >= 30);
    const ids = d.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(dashboard.templating.list.some((v) => v.type === 'datasource' && v.query === 'prometheus'));
  });
});
