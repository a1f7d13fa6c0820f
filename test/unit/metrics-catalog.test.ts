/**
 * The metric families are declared once (src/metrics/catalog.ts): the tables in docs/ are the
 * ones rendered from the declarations, a row per family, and a snapshot lists exactly the
 * declared families of the parts that are on, in their order, each with its declared type, help,
 * aggregator and label names.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { StoreState } from '../../src/accounts/postgres/state.js';
import { parseConfig } from '../../src/config/config.js';
import { ignoredFrames } from '../../src/upstreams/peer-frames.js';
import { renderMetrics } from '../../src/http/internal.js';
import { type FamilyDecl, METRICS, renderMetricsTable } from '../../src/metrics/catalog.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { block } from '../../scripts/readme-tables.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

const root = join(import.meta.dirname, '..', '..', '..');
const declared: FamilyDecl[] = Object.values(METRICS);

const LANE = { enabled: true, auction: `0x${'11'.repeat(20)}`, endpoint: 'http://127.0.0.1:8547', keyEnv: 'EL_KEY' };

function metrics(everything: boolean): Metrics {
  const chain = {
    chainId: DEV_CHAIN_ID,
    hosts: ['localhost'],
    sequencers: ['http://127.0.0.1:8547'],
    rpc: 'http://127.0.0.1:8545',
    sync: { enabled: everything },
    track: { enabled: everything },
    flashblocks: { enabled: everything, url: 'ws://127.0.0.1:9' },
    ...(everything ? { expressLane: LANE } : {}),
  };
  const config = parseConfig(
    {
      websocket: { enabled: everything },
      listen: { tls: { enabled: everything, certFile: 'c.pem', keyFile: 'k.pem' } },
      rehearsal: { everyMs: everything ? 10 : 0 },
      chains: [chain],
    },
    root,
    {},
  );
  const m = new Metrics(config, { version: '0.0.0-test', uws: 'test' });
  if (everything) {
    m.watchAccounts(StoreState.allocate());
    // Series bound on first use.
    m.requestObserver('http').stages?.(['host', 'parse']);
    m.wsTransport.opened();
    m.tls.certificate('*', 1);
    m.wsTransport.closed(1000);
    m.watchRehearsal({ answered: 1, failed: 0 });
  }
  m.accountsReload('loaded', 1);
  return m;
}

describe('metric families, declared once', () => {
  for (const page of ['observability.md', 'operations.md'])
    it(`the metrics table in docs/${page} is the one rendered from the declarations, a row per family`, () => {
      const table = block(readFileSync(join(root, 'docs', page), 'utf8'), 'metrics');
      assert.equal(table, renderMetricsTable(), `docs/${page} is out of date: run node dist/scripts/docs-tables.js`);
      const rows = [...table.matchAll(/^\| `(txgate_[a-z_]+)` \|/gm)].map((m) => m[1]!);
      assert.deepEqual(
        rows,
        declared.map((d) => d.name),
      );
    });

  it('names are unique and Prometheus-shaped; a counter ends in _total, a histogram in _seconds', () => {
    const names = declared.map((d) => d.name);
    assert.equal(new Set(names).size, names.length);
    for (const d of declared) {
      assert.match(d.name, /^txgate_[a-z0-9_]+$/);
      if (d.type === 'counter') assert.ok(d.name.endsWith('_total'), d.name);
      if (d.type === 'histogram') assert.ok(d.name.endsWith('_seconds'), d.name);
    }
  });

  it('with every part on, a snapshot is exactly the declared families, in order, with their type, help, aggregator and labels', () => {
    const snap = metrics(true).snapshot();
    assert.deepEqual(
      snap.map((f) => [f.name, f.type, f.help, f.aggregator]),
      declared.map((d) => [d.name, d.type, d.help, d.type === 'histogram' ? 'sum' : d.aggregator]),
    );
    for (const f of snap) {
      const d = declared.find((x) => x.name === f.name)!;
      assert.ok(f.values.length > 0 || f.name === 'txgate_rate_limited_total', `${f.name} has series`);
      for (const v of f.values)
        assert.deepEqual(
          Object.keys(v.labels).filter((l) => l !== 'le'),
          d.labels.map(([name]) => name),
          f.name,
        );
    }
  });

  it('with the optional parts off, their families are left out, and only theirs', () => {
    const names = metrics(false)
      .snapshot()
      .map((f) => f.name);
    assert.deepEqual(
      names,
      declared.filter((d) => d.part === 'always').map((d) => d.name),
    );
  });

  it('frames dropped from peers are counted by source', async () => {
    const m = metrics(false);
    const before = ignoredFrames.sequencer;
    ignoredFrames.sequencer += 3;
    try {
      const text = await renderMetrics([m.snapshot()]);
      assert.match(text, new RegExp(`^txgate_peer_frames_ignored_total\\{source="sequencer"\\} ${before + 3}$`, 'm'));
      assert.match(text, /^txgate_peer_frames_ignored_total\{source="chain_rpc"\} \d+$/m);
    } finally {
      ignoredFrames.sequencer = before;
    }
  });
});
