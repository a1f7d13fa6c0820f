/**
 * Observability: /metrics on the internal listener parses as Prometheus text and its counters
 * move by exactly the requests made; the public listener has no /metrics; logs carry no keys.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { newKey, startGate } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { StubSequencer } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { useGate } from '../support/gate-fixture.js';

let stub: StubSequencer;
const key = newKey();
const slow = newKey();

const gate = useGate(async () => {
  stub = await new StubSequencer().start();
  return {
    internal: true,
    sequencers: [stub.url],
    accounts: [
      { id: 'acme', keys: [key] },
      { id: 'slowpoke', keys: [slow], grants: [{ rateLimit: { perSecond: 0.01, burst: 1 } }] },
    ],
  };
});
after(async () => {
  await stub.stop();
});

type Sample = { name: string; labels: Record<string, string>; value: number };

/** A strict parser of the Prometheus text format (0.0.4): HELP/TYPE lines and samples. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      if (meta[1] === 'TYPE') {
        assert.match(meta[3]!, /^(counter|gauge|histogram|summary|untyped)$/, line);
        types.set(meta[2]!, meta[3]!);
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|[Nn]a[Nn]|[+-]Inf)$/.exec(line); // Prometheus parses NaN case-insensitively (prom-client writes "Nan")
    assert.ok(m, `not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  assert.ok(types.size > 0);
  return samples;
}

async function scrape(): Promise<Sample[]> {
  const r = await send({ port: gate.internalPort!, method: 'GET', path: '/metrics', host: '127.0.0.1' });
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^text\/plain/);
  return parse(r.text);
}
const value = (s: Sample[], name: string, labels: Record<string, string>) =>
  s.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v)).reduce((a, x) => a + x.value, 0);

describe('Server-Timing (opt-in)', () => {
  it('gives each stage a duration in ms when profiling.serverTiming is on, and is absent otherwise', async () => {
    const g = await startGate({ sequencers: [stub.url], accounts: [{ id: 'acme', keys: [key] }], config: { profiling: { serverTiming: true } } });
    try {
      const r = await rpc(g.port, 'eth_sendRawTransaction', [await sign1559({ nonce: 50 })], { key });
      assert.equal(r.status, 200);
      const st = String(r.headers['server-timing']);
      for (const stage of ['host', 'size_cap', 'parse', 'route', 'auth', 'grant', 'decode', 'fee', 'rate_limit', 'forward'])
        assert.match(st, new RegExp(`${stage};dur=\\d+\\.\\d{3}`), st);
    } finally {
      await g.stop();
    }
    const plain = await rpc(gate.port, 'eth_chainId', []);
    assert.equal(plain.headers['server-timing'], undefined);
  });
});

describe('metrics', () => {
  it('the internal listener binds where configured, with health and ready mirrors', async () => {
    assert.equal(gate.config.internal.host, '127.0.0.1');
    assert.ok(gate.internalPort !== null && gate.internalPort > 0);
    assert.equal((await send({ port: gate.internalPort!, method: 'GET', path: '/health' })).status, 200);
    assert.equal((await send({ port: gate.internalPort!, method: 'GET', path: '/ready' })).json.status, 'ready');
  });
  it('the public listener has no /metrics', async () => {
    assert.equal((await send({ port: gate.port, method: 'GET', path: '/metrics' })).status, 404);
  });
  it('counters move by exactly the requests made, per status and reason', async () => {
    const before = await scrape();
    for (let i = 0; i < 3; i++) await rpc(gate.port, 'eth_chainId', []);
    for (let i = 0; i < 2; i++) await rpc(gate.port, 'eth_getBalance', []);
    await rpc(gate.port, 'eth_sendRawTransaction', [await sign1559({ nonce: 1 })], { key: 'wrong' });
    await rpc(gate.port, 'eth_sendRawTransaction', [await sign1559({ nonce: 2 })], { key });
    await rpc(gate.port, 'eth_sendRawTransaction', [await sign1559({ nonce: 3, value: 1n })], { key });
    await rpc(gate.port, 'eth_sendRawTransaction', [await sign1559({ nonce: 4 })], { key: slow });
    await rpc(gate.port, 'eth_sendRawTransaction', [await sign1559({ nonce: 5 })], { key: slow });
    await send({ port: gate.port, headers: { 'content-type': 'application/json' }, body: '[1]' });
    const after = await scrape();
    const delta = (labels: Record<string, string>) => value(after, 'txgate_requests_total', labels) - value(before, 'txgate_requests_total', labels);
    assert.equal(delta({ method: 'eth_chainId', status: '200', reason: 'ok' }), 3);
    assert.equal(delta({ method: 'other', status: '400', reason: 'method_not_found' }), 2);
    assert.equal(delta({ method: 'eth_sendRawTransaction', status: '401', reason: 'unauthorized' }), 1);
    assert.equal(delta({ method: 'eth_sendRawTransaction', status: '200', reason: 'ok' }), 2);
    assert.equal(delta({ method: 'eth_sendRawTransaction', status: '402', reason: 'fee_rejected' }), 1);
    assert.equal(delta({ method: 'eth_sendRawTransaction', status: '429', reason: 'rate_limited' }), 1);
    assert.equal(delta({ method: 'unparsed', status: '400', reason: 'batch_not_supported' }), 1);
    assert.equal(delta({}), 11, 'and nothing else moved');
    const limited = value(after, 'txgate_rate_limited_total', { account: 'slowpoke' }) - value(before, 'txgate_rate_limited_total', { account: 'slowpoke' });
    assert.equal(limited, 1);
    const fwd =
      value(after, 'txgate_forwards_total', { chain: '4663', outcome: 'accepted' }) -
      value(before, 'txgate_forwards_total', { chain: '4663', outcome: 'accepted' });
    assert.equal(fwd, 2);
    const hist =
      value(after, 'txgate_request_duration_seconds_count', { method: 'eth_chainId', outcome: 'ok' }) -
      value(before, 'txgate_request_duration_seconds_count', { method: 'eth_chainId', outcome: 'ok' });
    assert.equal(hist, 3);
  });
  it('per-stage histograms are fed by one request in 64 (sampled, to stay off the hot path)', async () => {
    const before = await scrape();
    for (let i = 0; i < 128; i++) await rpc(gate.port, 'eth_chainId', []);
    const after = await scrape();
    const d = (stage: string) =>
      value(after, 'txgate_stage_duration_seconds_count', { stage }) - value(before, 'txgate_stage_duration_seconds_count', { stage });
    assert.equal(d('host'), 2);
    assert.equal(d('route'), 2);
    assert.equal(d('auth'), 0, 'eth_chainId never reaches auth');
  });
  it('gauges and info: sequencer up, in flight, accounts loaded, reloads, build info, process metrics', async () => {
    const s = await scrape();
    assert.equal(value(s, 'txgate_sequencer_up', { chain: '4663', sequencer: stub.url }), 1);
    assert.equal(value(s, 'txgate_forwards_in_flight', { chain: '4663' }), 0);
    assert.equal(value(s, 'txgate_accounts_loaded', {}), 2);
    assert.equal(value(s, 'txgate_account_reloads_total', { result: 'loaded' }), 1);
    const info = s.find((x) => x.name === 'txgate_build_info')!;
    assert.equal(info.value, 1);
    assert.match(info.labels.version!, /^\d+\.\d+\.\d+/);
    assert.equal(info.labels.node, process.version);
    assert.match(info.labels.uws!, /^uws_.*\.node$/);
    assert.equal(info.labels.secp256k1, 'npm');
    assert.equal(info.labels.signature, 'curve');
    assert.ok(s.some((x) => x.name === 'txgate_process_resident_memory_bytes'));
  });
  it('labels are bounded: no hash, key or free text', async () => {
    const s = await scrape();
    for (const x of s)
      for (const v of Object.values(x.labels)) {
        assert.doesNotMatch(v, /0x[0-9a-f]{64}/);
        assert.doesNotMatch(v, /txg_/);
      }
  });
});
