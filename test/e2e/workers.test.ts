/**
 * Several worker threads (the real CLI, workers: 2): connections spread over both threads;
 * rate-limit buckets and duplicate suppression are per process, shared across the threads;
 * one scrape of /metrics counts every thread's requests; SIGTERM drains and exits 0; an uncaught
 * error (in a worker thread, or with one thread) drains, answering what is in flight, and exits 1.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { initCrypto } from '../../src/base/native.js';
import { accountsDoc, eventually, newKey } from '../support/harness.js';
import { rpc, send } from '../support/http.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { sign1559 } from '../support/txs.js';
import { freePort } from '../../src/base/free-port.js';
import { startCli, writeCliConfig } from '../support/processes.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const key = newKey();
const limited = newKey();
let stub: StubSequencer;
let child: ChildProcess;
let port = 0;
let internalPort = 0;

before(async () => {
  await initCrypto();
  stub = await new StubSequencer().start();
  const dir = tempDir('txgate-workers-');
  writeFileSync(
    join(dir, 'accounts.json'),
    JSON.stringify(
      accountsDoc([
        { id: 'mm', keys: [key] },
        { id: 'lim', keys: [limited], grants: [{ rateLimit: { perSecond: 0.001, burst: 4 } }] },
      ]),
    ),
  );
  const g = await startCli(
    writeCliConfig(dir, {
      internal: { host: '127.0.0.1', port: 0 },
      workers: 2,
      websocket: { enabled: true, maxConnectionsPerAccount: 2 },
      chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [stub.url], probe: { intervalMs: 200 } }],
    }),
  );
  child = g.proc;
  const info = JSON.parse(
    g
      .out()
      .split('\n')
      .find((l) => l.includes('txgate listening'))!,
  ) as { workers: number };
  assert.equal(info.workers, 2);
  port = g.port;
  internalPort = g.internalPort!;
  await eventually(async () => (await send({ port: internalPort, method: 'GET', path: '/ready' })).status === 200, 5000);
});
after(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  await stub.stop();
});

describe('two worker threads', () => {
  it('connections are served by both threads on the one port', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < 2; i++) {
      const r = await rpc(port, 'eth_chainId', []);
      assert.equal(r.json.result, '0x1237');
      seen.add(String(r.headers['x-request-id']).split('.')[0]!);
    }
    assert.deepEqual([...seen].sort(), ['w0', 'w1']);
  });

  it('rate-limit buckets are per process: burst 4 over both threads → exactly 4 accepted', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await rpc(port, 'eth_sendRawTransaction', [await sign1559({ nonce: 300 + i })], { key: limited })).status);
    assert.equal(statuses.filter((s) => s === 200).length, 4, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 6);
  });

  it('identical bytes sent to both threads at once share one forward', async () => {
    // The kernel spreads connections over the threads by hash: a burst of 8 lands on one thread
    // about once in 128. Try fresh bursts until one reaches both threads (the property tested).
    for (let attempt = 0; ; attempt++) {
      assert.ok(attempt < 10, 'no burst of 8 connections reached both threads');
      stub.delayMs = 300;
      const raw = await sign1559({ nonce: 400 + attempt });
      const before = stub.sends().length;
      const rs = await Promise.all(Array.from({ length: 8 }, () => rpc(port, 'eth_sendRawTransaction', [raw], { key })));
      stub.delayMs = 0;
      for (const r of rs) assert.equal(r.json.result, txHash(raw));
      assert.equal(stub.sends().length - before, 1, 'one forward for the process');
      const threads = new Set(rs.map((r) => String(r.headers['x-request-id']).split('.')[0]));
      if (threads.size < 2) continue;
      const again = await rpc(port, 'eth_sendRawTransaction', [raw], { key });
      assert.equal(again.json.result, txHash(raw));
      assert.equal(stub.sends().length - before, 1, 'accepted moments ago: answered without a forward');
      return;
    }
  });

  it('the WebSocket connection cap is per process: past it every upgrade is refused, whichever thread takes it', async () => {
    const opened: WebSocket[] = [];
    const upgrade = () =>
      new Promise<WebSocket | number>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { host: 'localhost', 'x-api-key': key }, perMessageDeflate: false });
        ws.once('open', () => resolve(ws));
        ws.once('unexpected-response', (_req, res) => (ws.terminate(), resolve(res.statusCode ?? 0)));
        ws.once('error', reject);
      });
    try {
      for (let i = 0; i < 2; i++) {
        const ws = await upgrade();
        assert.ok(typeof ws !== 'number', `connection ${i + 1} of 2 opens`);
        opened.push(ws);
      }
      // Each new connection lands on either thread (SO_REUSEPORT): counted per thread, about
      // half of these would open.
      for (let i = 0; i < 8; i++) {
        const out = await upgrade();
        if (typeof out !== 'number') opened.push(out);
        assert.equal(typeof out === 'number' ? out : 'opened', 429, `attempt ${i + 1} past the cap is refused`);
      }
      const first = opened.shift()!;
      await new Promise((r) => (first.once('close', r), first.close()));
      const again = await eventually(async () => {
        const out = await upgrade();
        if (typeof out === 'number') return false;
        opened.push(out);
        return true;
      }, 3000);
      assert.ok(again, 'a closed connection gives its place back');
    } finally {
      for (const ws of opened) ws.terminate();
    }
  });

  it('one scrape counts the requests of every thread', async () => {
    const count = async () => {
      const text = (await send({ port: internalPort, method: 'GET', path: '/metrics' })).text;
      return Number(/^txgate_requests_total\{method="other",status="400",reason="method_not_found",transport="http"\} (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const before = await count();
    const threads = new Set<string>();
    for (let i = 0; i < 20; i++) threads.add(String((await rpc(port, 'eth_foo', [])).headers['x-request-id']).split('.')[0]!);
    assert.equal(threads.size, 2);
    assert.equal((await count()) - before, 20);
  });

  it('SIGTERM drains every thread and exits 0', async () => {
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 0);
  });
});

/** The CLI in a child process with `config` (accounts: key 'mm'); resolves once it logged its start-up line. */
async function spawnGate(config: Record<string, unknown>): Promise<{ proc: ChildProcess; port: number; internalPort: number; out: () => string }> {
  const dir = tempDir('txgate-cli-');
  writeFileSync(join(dir, 'accounts.json'), JSON.stringify(accountsDoc([{ id: 'mm', keys: [key] }])));
  const g = await startCli(writeCliConfig(dir, { internal: { host: '127.0.0.1', port: 0 }, workers: 2, ...config }));
  return { proc: g.proc, port: g.port, internalPort: g.internalPort ?? 0, out: g.out };
}

/** GET `path` on fresh connections until both threads answered; their answers by thread. */
async function fromBothThreads(port: number, path: string): Promise<Map<string, number>> {
  const by = new Map<string, number>();
  for (let i = 0; i < 60 && by.size < 2; i++) {
    const r = await send({ port, method: 'GET', path });
    by.set(String(r.headers['x-request-id']).split('.')[0]!, r.status);
  }
  return by;
}

describe('one view of sequencer health per process', () => {
  it('one prober for the process, not one per thread', async () => {
    const seq = await new StubSequencer().start();
    const g = await spawnGate({ chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [seq.url], probe: { intervalMs: 200 } }] });
    try {
      const probes = () => seq.calls.filter((c) => c.method === 'eth_chainId').length;
      const before = probes();
      await new Promise((r) => setTimeout(r, 2000));
      // One prober: ~10 probes in 2 s at 200 ms; one per thread would be ~20.
      const n = probes() - before;
      assert.ok(n >= 5 && n <= 13, `${n} probes in 2 s`);
    } finally {
      g.proc.kill('SIGKILL');
      await seq.stop();
    }
  });
  it('a transport error met by one thread takes the sequencer out on every thread: /ready and forwarding agree', async () => {
    const seq = await new StubSequencer().start();
    // Probes far apart: only the forward's own transport error can take the sequencer out.
    const g = await spawnGate({ chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [seq.url], probe: { intervalMs: 600_000 } }] });
    try {
      const up = await fromBothThreads(g.port, '/ready');
      assert.deepEqual([...up.keys()].sort(), ['w0', 'w1']);
      assert.deepEqual([...up.values()], [200, 200]);
      await seq.stop();
      const r = await rpc(g.port, 'eth_sendRawTransaction', [await sign1559({ nonce: 700 })], { key });
      assert.equal(r.status, 503, r.text);
      assert.equal(r.json.error.data.reason, 'upstream_unavailable', 'refused before anything was written: definite');
      const down = await fromBothThreads(g.port, '/ready');
      assert.deepEqual([...down.keys()].sort(), ['w0', 'w1']);
      assert.deepEqual([...down.values()], [503, 503], 'both threads see it down');
      for (let i = 0; i < 6; i++) {
        const again = await rpc(g.port, 'eth_sendRawTransaction', [await sign1559({ nonce: 701 + i })], { key });
        assert.equal(again.json.error.data.reason, 'upstream_unavailable');
      }
    } finally {
      g.proc.kill('SIGKILL');
    }
  });
  it('the public port opens last: when /health first answers, the first probe is done, the accounts loaded and the internal listener up', async () => {
    const seq = await new StubSequencer().start();
    // A slow first probe: a public port opened before it ended would answer /ready 503 meanwhile.
    seq.chainIdDelayMs = 400;
    const internal = await freePort();
    const dir = tempDir('txgate-order-');
    const pub = await freePort();
    writeFileSync(join(dir, 'accounts.json'), JSON.stringify(accountsDoc([{ id: 'mm', keys: [key] }])));
    writeFileSync(
      join(dir, 'txgate.json'),
      JSON.stringify({
        listen: { host: '127.0.0.1', port: pub },
        internal: { host: '127.0.0.1', port: internal },
        workers: 2,
        chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [seq.url] }],
      }),
    );
    const proc = spawn(process.execPath, [join(import.meta.dirname, '../../src/cli.js'), '--config', join(dir, 'txgate.json')], { stdio: 'ignore' });
    try {
      await eventually(async () => (await send({ port: pub, method: 'GET', path: '/health' }).catch(() => null))?.status === 200, 15_000);
      const ready = await send({ port: pub, method: 'GET', path: '/ready' });
      assert.equal(ready.status, 200, ready.text);
      const metrics = await send({ port: internal, method: 'GET', path: '/metrics' });
      assert.equal(metrics.status, 200);
    } finally {
      proc.kill('SIGKILL');
      await seq.stop();
    }
  });
});

describe('an uncaught error (a bug)', () => {
  for (const workers of [2, 1]) {
    it(`${workers === 2 ? 'in one of two worker threads' : 'with one thread'}: requests in flight are answered, then the process exits 1`, async () => {
      const dir = tempDir('txgate-fail-');
      const flag = join(dir, 'fail-now');
      // Fault injection from outside the product: a preload (inherited by the worker threads)
      // that throws an uncaught error in thread 1 (or the main thread) once the flag file exists.
      const preload = join(dir, 'fail.mjs');
      writeFileSync(
        preload,
        `import { isMainThread, workerData } from 'node:worker_threads';
  import { existsSync } from 'node:fs';
  if (${workers === 2 ? '!isMainThread && workerData?.index === 1' : 'isMainThread'}) {
    const t = setInterval(() => { if (existsSync(${JSON.stringify(flag)})) { clearInterval(t); throw new Error('injected failure'); } }, 10);
    t.unref();
  }
  `,
      );
      const slow = await new StubSequencer().start();
      slow.delayMs = 600;
      writeFileSync(join(dir, 'accounts.json'), JSON.stringify(accountsDoc([{ id: 'mm', keys: [key] }])));
      const g = await startCli(writeCliConfig(dir, { workers, chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: [slow.url] }] }), [
        '--import',
        preload,
      ]);
      const proc = g.proc;
      const exited = new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
      try {
        const p = g.port;
        await eventually(async () => (await rpc(p, 'eth_chainId', [])).status === 200);
        // Fresh connections, so both threads get some (the kernel spreads them by hash).
        const raws = await Promise.all(Array.from({ length: 8 }, (_, i) => sign1559({ nonce: 500 + 10 * workers + i })));
        const inFlight = raws.map((raw) => rpc(p, 'eth_sendRawTransaction', [raw], { key }));
        await eventually(() => slow.sends().length === raws.length);
        writeFileSync(flag, '');
        const rs = await Promise.all(inFlight);
        assert.deepEqual(
          rs.map((r) => r.json.result),
          raws.map((raw) => txHash(raw)),
        );
        assert.equal(await exited, 1);
        const msgs = g
          .out()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { msg: string; level: string });
        assert.ok(
          msgs.some((m) => m.level === 'fatal' && m.msg.startsWith(workers === 2 ? 'uncaught error in a worker thread' : 'uncaught error: draining')),
          g.out(),
        );
        assert.equal(msgs.at(-1)?.msg, 'stopped');
        assert.doesNotMatch(g.out(), /Assertion failed|open handles/);
      } finally {
        if (proc.exitCode === null) proc.kill('SIGKILL');
        await slow.stop();
      }
    });
  }
});
