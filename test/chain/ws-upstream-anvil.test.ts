/**
 * A ws:// sequencer that is a real chain: anvil's WebSocket endpoint, reached directly and
 * through a TCP proxy this test controls (src/upstreams/ws/ws-upstream.ts). Through the proxy a
 * connection is killed with calls in flight, after anvil read them or before it could; txgate
 * reconnects, and every answer stays true: 200 only with the transaction's hash and anvil
 * holding that transaction, a written call resolved by the resend or the lookup (docs/design.md
 * §5), 502 uncertain with `data.txHash` when anvil cannot be asked in time.
 */
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createPublicClient, http, type Hex } from 'viem';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { eventually, newKey, startGate, type Gate } from '../support/harness.js';
import { rpc } from '../support/http.js';
import { freePort } from '../../src/base/free-port.js';
import { txHash } from '../support/stub-sequencer.js';
import { signNext } from '../support/txs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const key = newKey();
const accounts = [{ id: 'mm', keys: [key], allowUntipped: true, grants: [{ rateLimit: { perSecond: 1e6, burst: 1e6 }, sync: true }] }];
const submit = (g: Gate, raw: string, method = 'eth_sendRawTransaction') => rpc(g.port, method, [raw], { key });

/**
 * A TCP proxy in front of anvil. Each client connection gets its own connection to anvil; what
 * the connections do with the bytes (`set`) holds for those open and those opened later (one
 * still reconnecting must not slip past it), until `kill`, after which new ones pass everything
 * unless the proxy refuses them.
 */
class TcpProxy {
  private readonly server: Server;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket; mode: 'pass' | 'hold answers' | 'drop calls' }>();
  /** New connections are closed at once (anvil unreachable). */
  refuse = false;
  private mode: 'pass' | 'hold answers' | 'drop calls' = 'pass';
  /** Connections accepted (not refused). */
  accepted = 0;
  /** Bytes of client data dropped in 'drop calls' mode. */
  dropped = 0;
  port = 0;
  constructor(private readonly target: number) {
    this.server = createServer((client) => {
      client.on('error', () => {});
      if (this.refuse) return void client.destroy();
      this.accepted++;
      const upstream = connect(this.target, '127.0.0.1');
      upstream.on('error', () => {});
      const pair = { client, upstream, mode: this.mode };
      this.pairs.add(pair);
      client.on('data', (d: Buffer) => {
        if (pair.mode === 'drop calls') this.dropped += d.length;
        else upstream.write(d);
      });
      // Held answers are never delivered: the connection is killed instead.
      upstream.on('data', (d: Buffer) => {
        if (pair.mode !== 'hold answers') client.write(d);
      });
      const end = () => {
        this.pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end);
      upstream.on('close', end);
    });
  }
  async listen(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }
  /** How every connection, open now or later, treats the bytes from here on. */
  set(mode: 'pass' | 'hold answers' | 'drop calls'): void {
    this.mode = mode;
    for (const p of this.pairs) p.mode = mode;
  }
  get open(): number {
    return this.pairs.size;
  }
  /** Destroys every open connection, both sides, at once (as a reset would); later ones pass. */
  kill(): void {
    this.mode = 'pass';
    for (const p of this.pairs) {
      p.client.resetAndDestroy();
      p.upstream.destroy();
    }
  }
  close(): Promise<void> {
    this.kill();
    return new Promise((r) => this.server.close(() => r()));
  }
}

let anvil: Anvil;
before(async () => {
  anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID });
});
after(async () => {
  await anvil.stop();
});
const chain = () => createPublicClient({ transport: http(anvil.url) });
const known = async (raw: string) =>
  (await chain()
    .getTransaction({ hash: txHash(raw) as Hex })
    .catch(() => null)) !== null;

describe("a ws:// sequencer: anvil's WebSocket endpoint", () => {
  let gate: Gate;
  before(async () => {
    gate = await startGate({
      chainB: false,
      sequencers: [anvil.url.replace('http:', 'ws:')],
      accounts,
      config: { allowUntipped: true },
      chainA: { sync: { enabled: true, maxWaitMs: 4000, syncTimeoutFormat: 'omit' } },
    });
  });
  after(async () => {
    await gate.stop();
  });

  it('a submission: 200 with the hash, and it is mined', async () => {
    const raw = await signNext(anvil.url, 1);
    const r = await submit(gate, raw);
    assert.equal(r.json.result, txHash(raw), JSON.stringify(r.json));
    const receipt = await chain().waitForTransactionReceipt({ hash: txHash(raw) as Hex, timeout: 10_000 });
    assert.equal(receipt.status, 'success');
  });

  it('the sync send over it: 200 with the receipt', async () => {
    const raw = await signNext(anvil.url, 2);
    const r = await submit(gate, raw, 'eth_sendRawTransactionSync');
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.result.transactionHash, txHash(raw));
    assert.equal(r.json.result.status, '0x1');
  });

  it('many in flight at once on the connections: every one accepted and mined', async () => {
    const raws: Hex[] = [];
    for (let s = 3; s < 7; s++) raws.push(await signNext(anvil.url, s));
    const rs = await Promise.all(raws.map((raw) => submit(gate, raw)));
    for (const [i, r] of rs.entries()) assert.equal(r.json.result, txHash(raws[i]!), JSON.stringify(r.json));
    for (const raw of raws) await chain().waitForTransactionReceipt({ hash: txHash(raw) as Hex, timeout: 10_000 });
  });
});

describe('a ws:// sequencer behind a proxy: connections killed with calls in flight', () => {
  let proxy: TcpProxy;
  let gate: Gate;
  before(async () => {
    proxy = await new TcpProxy(Number(new URL(anvil.url).port)).listen();
    gate = await startGate({
      chainB: false,
      sequencers: [`ws://127.0.0.1:${proxy.port}`],
      accounts,
      config: { allowUntipped: true },
      // Probed rarely: the held answers below must not take the sequencer out meanwhile.
      chainA: {
        probe: { intervalMs: 2000, timeoutMs: 3000 },
        forward: { timeoutMs: 3000 },
        sync: { enabled: true, maxWaitMs: 4000, syncTimeoutFormat: 'omit' },
      },
    });
  });
  // Before a test changes what the connections do: the forward's two and the prober's one are
  // open (again, after a test killed them), and the sequencer is up (a probe whose answer was
  // held, then cut, took it out until the next probe).
  beforeEach(async () => {
    await eventually(() => proxy.open >= 3, 10_000);
    await eventually(
      () =>
        gate.logs
          .filter((l) => /"msg":"sequencer (up|down)"/.test(l))
          .at(-1)
          ?.includes('sequencer up') === true,
      10_000,
    );
  });
  after(async () => {
    await gate.stop();
    await proxy.close();
  });

  /** Submits until one is answered 200 (the sequencer may be out until a probe sees it back). */
  async function accepted(raw: string, method = 'eth_sendRawTransaction'): Promise<{ status: number; json: any }> {
    const r = await eventually(async () => {
      const r = await submit(gate, raw, method);
      return r.status === 200 ? r : null;
    }, 10_000);
    return r!;
  }

  it('killed after anvil read the calls: each is resolved to 200 with its hash (the resend or the lookup on a new connection)', async () => {
    proxy.set('hold answers');
    const raws = [await signNext(anvil.url, 0), await signNext(anvil.url, 1), await signNext(anvil.url, 2)];
    const before = proxy.accepted;
    const pending = raws.map((raw) => submit(gate, raw));
    // anvil has every one (read, executed), and none of its answers reached txgate.
    for (const raw of raws) await eventually(() => known(raw), 5000);
    proxy.kill();
    const rs = await Promise.all(pending);
    for (const [i, r] of rs.entries()) {
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.result, txHash(raws[i]!));
    }
    assert.ok(proxy.accepted > before, 'txgate connected again');
    // The audit says how each was established: never by an answer that was lost.
    for (const raw of raws) {
      const parts = gate.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.audit === 'forward' && l.tx === txHash(raw));
      assert.equal(parts.length, 1, JSON.stringify(parts));
      assert.equal(parts[0]!.outcome, 'accepted');
      assert.match(String(parts[0]!.rule), /^(resend|lookup)$/, JSON.stringify(parts));
    }
  });

  it('killed before anvil could read the calls: the same bytes are sent again, accepted with the hash, and mined', async () => {
    proxy.set('drop calls');
    const raws = [await signNext(anvil.url, 3), await signNext(anvil.url, 4)];
    const pending = raws.map((raw) => submit(gate, raw));
    // Both frames were written (and swallowed): two transactions' worth of bytes.
    await eventually(() => proxy.dropped >= raws.reduce((n, raw) => n + raw.length, 0), 5000).catch(async (e) => {
      const rs = await Promise.race([Promise.all(pending), new Promise((r) => setTimeout(() => r('pending'), 2000))]);
      throw new Error(`${e}: dropped ${proxy.dropped} open ${proxy.open}, answers ${JSON.stringify(rs)}\n${gate.logs.slice(-30).join('\n')}`);
    });
    for (const raw of raws) assert.equal(await known(raw), false, 'anvil never saw it');
    proxy.kill();
    const rs = await Promise.all(pending);
    for (const [i, r] of rs.entries()) {
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.result, txHash(raws[i]!));
      const receipt = await chain().waitForTransactionReceipt({ hash: txHash(raws[i]!) as Hex, timeout: 10_000 });
      assert.equal(receipt.status, 'success');
    }
  });

  it('killed while anvil stays unreachable: 502 uncertain with data.txHash, never accepted; later submissions succeed once it is back', async () => {
    proxy.set('hold answers');
    const raw = await signNext(anvil.url, 5);
    const pending = submit(gate, raw);
    await eventually(() => known(raw), 5000);
    proxy.refuse = true;
    proxy.kill();
    const r = await pending;
    assert.equal(r.status, 502, JSON.stringify(r.json));
    assert.equal(r.json.error.data.reason, 'upstream_error');
    assert.equal(r.json.error.data.txHash, txHash(raw));
    assert.equal(r.json.result, undefined);
    // anvil does hold it: "uncertain" was the truth as far as txgate could tell.
    assert.equal(await known(raw), true);

    proxy.refuse = false;
    const next = await signNext(anvil.url, 6);
    const ok = await accepted(next);
    assert.equal(ok.json.result, txHash(next));
    const receipt = await chain().waitForTransactionReceipt({ hash: txHash(next) as Hex, timeout: 10_000 });
    assert.equal(receipt.status, 'success');
    // The sync send works on the new connection too.
    const sync = await signNext(anvil.url, 6);
    const s = await accepted(sync, 'eth_sendRawTransactionSync');
    assert.equal(s.json.result.transactionHash, txHash(sync));
  });
});
