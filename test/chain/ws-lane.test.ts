/**
 * The WebSocket lane (config `websocket`, off by default): the upgrade's refusals, one JSON-RPC
 * request per frame through the same stages, answers by id in completion order with
 * `data.status`, the per-connection bounds, revocation, drain, the server's pings, and the
 * client kit and both adapters over it, against a real anvil (and a stub sequencer only to make
 * answers overtake each other or to inject faults).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { Wallet, JsonRpcProvider } from 'ethers';
import { createPublicClient, createWalletClient, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { connectTxgate } from '../../packages/client/src/index.js';
import { TxgateProvider } from '../../packages/client/src/ethers.js';
import { txgate } from '../../packages/client/src/viem.js';
import { accountsDoc, eventually, MIN_TIP, newKey, startGate, TIP, type AccountIn, type Gate } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { send } from '../support/http.js';
import { StubSequencer, txHash } from '../support/stub-sequencer.js';
import { LOCAL_FEES, sign1559, SIGNERS, signNext } from '../support/txs.js';
import { ANVIL_KEYS } from '../../src/dev/anvil.js';
import { keysNeverLogged } from '../support/gate-fixture.js';

keysNeverLogged();

interface Answer {
  readonly id: unknown;
  readonly result?: unknown;
  readonly error?: { code: number; message: string; data: { reason: string; status: number; [k: string]: unknown } };
}

/** A test client: every answer kept in arrival order; `call` resolves with the answer to its id. */
class Client {
  readonly answers: Answer[] = [];
  private readonly waiting = new Map<unknown, (a: Answer) => void>();
  readonly closed: Promise<{ code: number; reason: string }>;
  private seq = 0;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      const a = JSON.parse(d.toString()) as Answer;
      this.answers.push(a);
      this.waiting.get(a.id)?.(a);
      this.waiting.delete(a.id);
    });
    this.closed = new Promise((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));
  }

  call(method: string, params: unknown[] = [], id: number | string = ++this.seq): Promise<Answer> {
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /** The next answer whatever its id (for frames answered with id null). */
  next(): Promise<Answer> {
    const n = this.answers.length;
    return eventually(() => this.answers[n], 5_000) as Promise<Answer>;
  }
}

type Opened = { kind: 'open'; client: Client } | { kind: 'refused'; status: number; body: { error: { data: { reason: string } } } | null };

function open(port: number, key: string | null, host = 'localhost'): Promise<Opened> {
  const headers: Record<string, string> = { host };
  if (key !== null) headers['x-api-key'] = key;
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers, perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ kind: 'open', client: new Client(ws) }));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        ws.terminate();
        let body = null;
        try {
          body = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({ kind: 'refused', status: res.statusCode ?? 0, body });
      });
    });
    ws.once('error', (e) => reject(e));
  });
}

async function connected(port: number, key: string, host?: string): Promise<Client> {
  const o = await open(port, key, host);
  assert.equal(o.kind, 'open', JSON.stringify(o));
  return (o as { client: Client }).client;
}

const key = newKey();
const other = newKey(); // no grant for chain 10
const disabled = newKey();
const capped = newKey();
const ACCOUNTS: AccountIn[] = [
  { id: 'mm', keys: [key], allowUntipped: true, grants: [{ chainId: 4663 }] },
  { id: 'other', keys: [other], grants: [{ chainId: 4663 }] },
  { id: 'off', keys: [disabled], submissionEnabled: false },
  { id: 'capped', keys: [capped], allowUntipped: true },
];
const WS = { enabled: true, maxInFlight: 64, maxConnectionsPerAccount: 2 };

let stub: StubSequencer;
let gate: Gate;
let nonce = 50_000;
const tx = (signer = 0) => sign1559({ signer, nonce: nonce++ });

before(async () => {
  stub = await new StubSequencer().start();
  gate = await startGate({ sequencers: [stub.url], accounts: ACCOUNTS, config: { websocket: WS }, internal: true });
});
after(async () => {
  await gate.stop();
  await stub.stop();
});

describe('the WebSocket lane: off by default', () => {
  it('with websocket off, an upgrade gets what it gets today (405 on GET /), and no ws series exist', async () => {
    const off = await startGate({ sequencers: [stub.url], accounts: ACCOUNTS });
    try {
      const o = await open(off.port, key);
      assert.equal(o.kind, 'refused');
      assert.equal((o as { status: number }).status, 405);
      assert.equal((o as { body: { error: { data: { reason: string } } } }).body.error.data.reason, 'method_not_allowed');
      const names = off.app.metrics!.snapshot().map((m) => m.name);
      assert.ok(names.includes('txgate_requests_total'));
      assert.ok(!names.includes('txgate_ws_connections') && !names.includes('txgate_ws_closes_total'), names.join());
      const series = off.app.metrics!.snapshot().find((m) => m.name === 'txgate_requests_total')!.values;
      assert.ok(!series.some((v) => v.labels.transport === 'ws'), 'no ws request series');
    } finally {
      await off.stop();
    }
  });
});

describe('the WebSocket lane: the upgrade', () => {
  it('refuses as HTTP does: 421 for an unknown host, 401 without or with an unknown key, 403 for a disabled account or a chain not granted', async () => {
    const cases: [string | null, string, number, string][] = [
      [key, 'nowhere.example', 421, 'misdirected_host'],
      [null, 'localhost', 401, 'unauthorized'],
      ['txg_not_a_key', 'localhost', 401, 'unauthorized'],
      [disabled, 'localhost', 403, 'submission_disabled'],
      [other, 'fast.chain-b.example', 403, 'chain_not_granted'],
    ];
    for (const [k, host, status, reason] of cases) {
      const o = await open(gate.port, k, host);
      assert.equal(o.kind, 'refused', `${host} ${reason}`);
      const r = o as { status: number; body: { error: { data: { reason: string } } } };
      assert.equal(r.status, status, reason);
      assert.equal(r.body.error.data.reason, reason);
    }
  });

  it('caps open connections per account: 429 too_many_connections, and a closed one frees its place', async () => {
    const a = await connected(gate.port, capped);
    const b = await connected(gate.port, capped);
    const third = await open(gate.port, capped);
    assert.equal(third.kind, 'refused');
    assert.equal((third as { status: number }).status, 429);
    assert.equal((third as { body: { error: { data: { reason: string } } } }).body.error.data.reason, 'too_many_connections');
    a.ws.close();
    await a.closed;
    const again = await connected(gate.port, capped);
    for (const c of [b, again]) c.ws.close();
    await Promise.all([b.closed, again.closed]);
  });
});

describe('the WebSocket lane: frames', () => {
  it('eth_chainId and a submission are answered as over HTTP; every error carries data.reason and data.status', async () => {
    const c = await connected(gate.port, key);
    try {
      assert.deepEqual(await c.call('eth_chainId', [], 'k'), { jsonrpc: '2.0', id: 'k', result: '0x1237' });
      const raw = await tx();
      const ok = await c.call('eth_sendRawTransaction', [raw]);
      assert.equal(ok.result, txHash(raw));
      const bad = await c.call('eth_sendRawTransaction', ['0x02zz']);
      assert.equal(bad.error?.data.reason, 'invalid_params');
      assert.equal(bad.error?.data.status, 400);
      const unknown = await c.call('eth_getBalance', []);
      assert.deepEqual([unknown.error?.data.reason, unknown.error?.data.status, unknown.error?.code], ['method_not_found', 400, -32601]);
      // Not JSON: answered with id null (there is no id to match), the connection stays open.
      c.ws.send('{"jsonrpc":"2.0","id":7,');
      const parse = await c.next();
      assert.deepEqual([parse.id, parse.error?.data.reason, parse.error?.data.status], [null, 'parse_error', 400]);
      c.ws.send(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }]));
      assert.equal((await c.next()).error?.data.reason, 'batch_not_supported');
      c.ws.send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'eth_chainId' })), { binary: true });
      assert.equal((await c.next()).error?.data.reason, 'unsupported_content_type');
      assert.equal((await c.call('eth_chainId')).result, '0x1237', 'still open');
    } finally {
      c.ws.close();
    }
  });

  it('many in flight on one connection: every answer matched by its id, in completion order (not request order)', async () => {
    const c = await connected(gate.port, key);
    // The stub holds each submission for a different time, so later ones overtake earlier ones.
    stub.delayOf = (call) => (parseInt(txHash(String(call.params[0])).slice(-2), 16) % 40) * 2;
    try {
      const raws = await Promise.all(Array.from({ length: 60 }, () => tx(1)));
      const answers = await Promise.all(raws.map((raw, i) => c.call('eth_sendRawTransaction', [raw], 1000 + i)));
      answers.forEach((a, i) => {
        assert.equal(a.id, 1000 + i);
        assert.equal(a.result, txHash(raws[i]!));
      });
      const order = c.answers.map((a) => a.id as number);
      assert.notDeepEqual(
        order,
        [...order].sort((x, y) => x - y),
        'answers arrived in request order: nothing overtook',
      );
    } finally {
      stub.delayOf = null;
      c.ws.close();
    }
  });

  it('beyond websocket.maxInFlight a frame is answered overloaded (503, its id), and nothing is sent for it', async () => {
    const g = await startGate({ sequencers: [stub.url], accounts: ACCOUNTS, config: { websocket: { ...WS, maxInFlight: 3 } } });
    const c = await connected(g.port, key);
    stub.delayMs = 300;
    const before = stub.sends().length;
    try {
      const raws = await Promise.all(Array.from({ length: 6 }, () => tx(2)));
      const answers = await Promise.all(raws.map((raw, i) => c.call('eth_sendRawTransaction', [raw], i)));
      const overloaded = answers.filter((a) => a.error?.data.reason === 'overloaded');
      assert.equal(overloaded.length, 3);
      for (const a of overloaded) assert.equal(a.error?.data.status, 503);
      assert.deepEqual(
        answers.filter((a) => a.result !== undefined).map((a) => a.id),
        [0, 1, 2],
      );
      assert.equal(stub.sends().length - before, 3, 'the overloaded ones were never sent');
    } finally {
      stub.delayMs = 0;
      c.ws.close();
      await g.stop();
    }
  });

  it('a sequencer fault mid-flight: 502 upstream_error (uncertain: it was written) vs 503 upstream_unavailable (never sent), as over HTTP', async () => {
    const faulty = await new StubSequencer().start();
    const g = await startGate({ sequencers: [faulty.url], accounts: ACCOUNTS, config: { websocket: WS } });
    const c = await connected(g.port, key);
    try {
      faulty.behaviour = () => ({ kind: 'destroy' });
      const cut = await c.call('eth_sendRawTransaction', [await tx()]);
      assert.deepEqual([cut.error?.data.reason, cut.error?.data.status], ['upstream_error', 502]);
      assert.equal(typeof cut.error?.data.txHash, 'string');
      await faulty.stop(); // no sequencer at all: never sent
      const none = await eventually(async () => {
        const a = await c.call('eth_sendRawTransaction', [await tx()]);
        return a.error?.data.reason === 'upstream_unavailable' ? a : undefined;
      });
      assert.equal(none!.error?.data.status, 503);
    } finally {
      c.ws.close();
      await g.stop();
    }
  });

  it('a frame over limits.maxBodyBytes is answered 413 payload_too_large by its id (nothing sent); far over it, the connection is dropped', async () => {
    const g = await startGate({ sequencers: [stub.url], accounts: ACCOUNTS, config: { websocket: WS, limits: { maxBodyBytes: 1024 } } });
    const c = await connected(g.port, key);
    try {
      const big = await c.call('eth_sendRawTransaction', ['0x' + 'ab'.repeat(1000)], 'big');
      assert.deepEqual([big.id, big.error?.data.reason, big.error?.data.status], ['big', 'payload_too_large', 413]);
      assert.equal((await c.call('eth_chainId')).result, '0x1237', 'still open');
      c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: ['0x' + 'ab'.repeat(5000)] }));
      assert.equal((await c.closed).code, 1006);
    } finally {
      await g.stop();
    }
  });

  it('a client that does not read its answers: refused overloaded past half the backpressure limit, then closed 1013 when an answer cannot be queued', async () => {
    const g = await startGate({ sequencers: [stub.url], accounts: ACCOUNTS, config: { websocket: { ...WS, maxBackpressureBytes: 64 << 10 } }, internal: true });
    const c = await connected(g.port, key);
    const socket = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    try {
      socket.pause(); // reads nothing: the answers pile up in the kernel, then in uWS
      // eth_chainId over 512 bytes is answered 413 with its id: an 8-kB id makes every answer
      // 8 kB, so the buffer steps past half the 64-kB limit (then overloaded) before past it.
      const sent = 3000;
      for (let i = 0; i < sent; i++) c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: `${i}:${'x'.repeat(8_000)}`, method: 'eth_chainId', params: [] }));
      const closedLine = (await eventually(() => g.logs.find((l) => l.includes('"msg":"websocket closed"')), 20_000)) as string;
      assert.match(closedLine, /"code":1013/);
      socket.resume();
      await c.closed;
      const ids = c.answers.map((a) => String(a.id).split(':')[0]);
      assert.ok(c.answers.length < sent, `${c.answers.length} of ${sent} answered: the rest were lost with the connection, which says so by closing`);
      assert.equal(new Set(ids).size, ids.length, 'no answer twice');
      const reasons = new Set(c.answers.map((a) => a.error?.data.reason));
      assert.ok(reasons.has('payload_too_large'), 'answered while the buffer had room');
      assert.ok(reasons.has('overloaded'), 'refused overloaded past half the limit, before the close');
      const scrape = await send({ port: g.internalPort!, method: 'GET', path: '/metrics' });
      assert.match(scrape.text, /txgate_ws_closes_total\{code="1013"\} 1/);
    } finally {
      c.ws.terminate();
      await g.stop();
    }
  });

  it('a connection dropped by the client with submissions in flight: each is logged with its outcome as closed unanswered', async () => {
    const c = await connected(gate.port, key);
    stub.delayMs = 300;
    try {
      const raw = await tx();
      c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] }));
      await eventually(() => stub.sends().some((s) => s.params[0] === raw));
      c.ws.terminate();
      const line = (await eventually(() => gate.logs.find((l) => l.includes('closed unanswered') && l.includes(txHash(raw))))) as string;
      // Written to the sequencer and accepted: the outcome is in the line, nobody received it.
      assert.match(line, /"us":/);
      assert.doesNotMatch(line, /"reason"/);
      assert.ok(gate.logs.some((l) => l.includes('"msg":"websocket closed"') && l.includes('"inFlight":1')));
    } finally {
      stub.delayMs = 0;
    }
  });

  it('the rate limit spends the same bucket over HTTP and WebSocket', async () => {
    const limited = newKey();
    const g = await startGate({
      sequencers: [stub.url],
      accounts: [{ id: 'lim', keys: [limited], allowUntipped: true, grants: [{ rateLimit: { perSecond: 0.001, burst: 2 } }] }],
      config: { websocket: WS },
    });
    const c = await connected(g.port, limited);
    try {
      const overHttp = await send({
        port: g.port,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [await tx()] }),
        headers: { 'x-api-key': limited, 'content-type': 'application/json' },
      });
      assert.equal(overHttp.status, 200);
      assert.ok((await c.call('eth_sendRawTransaction', [await tx()])).result);
      const third = await c.call('eth_sendRawTransaction', [await tx()]);
      assert.deepEqual([third.error?.data.reason, third.error?.data.status], ['rate_limited', 429]);
      assert.equal(typeof third.error?.data.retryAfterMs, 'number');
    } finally {
      c.ws.close();
      await g.stop();
    }
  });
});

describe('the WebSocket lane: keys, pings, drain', () => {
  it('a key revoked while its connection is open: frames refused at once (401), the connection closed with 4001 after answering what is in flight', async () => {
    const k = newKey();
    const g = await startGate({ sequencers: [stub.url], accounts: [...ACCOUNTS, { id: 'rev', keys: [k], allowUntipped: true }], config: { websocket: WS } });
    const c = await connected(g.port, k);
    stub.delayMs = 400;
    try {
      const raw = await tx();
      const inFlight = c.call('eth_sendRawTransaction', [raw]);
      await eventually(() => stub.sends().some((s) => s.params[0] === raw));
      g.writeAccounts(accountsDoc(ACCOUNTS));
      await g.app.store.reload?.('test');
      // Still open while its first request is in flight: a new frame is refused by the key check.
      const refused = await c.call('eth_sendRawTransaction', [await tx()]);
      assert.deepEqual([refused.error?.data.reason, refused.error?.data.status], ['unauthorized', 401]);
      const closed = await c.closed;
      assert.equal((await inFlight).result, txHash(raw), 'answered before the close');
      assert.equal(closed.code, 4001);
      const again = await open(g.port, k);
      assert.equal((again as { status: number }).status, 401);
    } finally {
      stub.delayMs = 0;
      await g.stop();
    }
  });

  it('an idle connection outlives the idle timeout: the server pings, the client answers, and it still submits', async () => {
    const g = await startGate({ sequencers: [stub.url], accounts: ACCOUNTS, config: { websocket: { ...WS, idleTimeoutSeconds: 8 } } });
    const c = await connected(g.port, key);
    let pings = 0;
    c.ws.on('ping', () => pings++);
    try {
      await new Promise((r) => setTimeout(r, 13_000));
      assert.ok(pings >= 1, 'the server pinged');
      assert.equal(c.ws.readyState, WebSocket.OPEN);
      const raw = await tx();
      assert.equal((await c.call('eth_sendRawTransaction', [raw])).result, txHash(raw));
    } finally {
      c.ws.close();
      await g.stop();
    }
  });

  it('drain: in-flight requests answered, new frames answered draining (nothing sent), then close 1001; no new upgrades', async () => {
    const g = await startGate({ sequencers: [stub.url], accounts: ACCOUNTS, config: { websocket: WS } });
    const c = await connected(g.port, key);
    stub.delayMs = 500;
    try {
      const raw = await tx();
      const inFlight = c.call('eth_sendRawTransaction', [raw]);
      await eventually(() => stub.sends().some((s) => s.params[0] === raw));
      const stopping = g.stop();
      await eventually(() => g.app.readiness.draining);
      const late = await c.call('eth_sendRawTransaction', [await tx()]);
      assert.deepEqual([late.error?.data.reason, late.error?.data.status], ['draining', 503]);
      const upgrade = await open(g.port, key).then(
        (o) => o.kind,
        () => 'no connection',
      );
      assert.notEqual(upgrade, 'open', 'no new upgrades while draining');
      assert.equal((await inFlight).result, txHash(raw));
      assert.equal((await c.closed).code, 1001);
      await stopping;
    } finally {
      stub.delayMs = 0;
    }
  });

  it('metrics: open connections, frames by transport, close codes', async () => {
    const scrape = async () => (await fetch(`http://127.0.0.1:${gate.internalPort}/metrics`)).text();
    const c = await connected(gate.port, key);
    await c.call('eth_chainId');
    const open = await scrape();
    assert.match(open, /^txgate_ws_connections [1-9]/m);
    assert.match(open, /^txgate_requests_total\{method="eth_chainId",status="200",reason="ok",transport="ws"\} [1-9]/m);
    c.ws.close(1000);
    await c.closed;
    await eventually(async () => /^txgate_ws_closes_total\{code="1000"\} [1-9]/m.test(await scrape()));
  });

  it("per-stage metrics: the lane's requests are sampled into the stage series by the pipeline, as HTTP's are (1 in 64)", async () => {
    const g = await startGate({ sequencers: [stub.url], accounts: ACCOUNTS, config: { websocket: WS }, internal: true });
    const c = await connected(g.port, key);
    try {
      const count = async (stage: string) => {
        const text = (await send({ port: g.internalPort!, method: 'GET', path: '/metrics' })).text;
        return Number(new RegExp(`^txgate_stage_duration_seconds_count\\{stage="${stage}"\\} (\\d+)`, 'm').exec(text)?.[1]);
      };
      assert.equal(await count('host'), 0, 'the series exist before a sample');
      // No request over HTTP on this gate: only the lane's 64 frames.
      for (let i = 0; i < 64; i++) assert.equal((await c.call('eth_chainId')).result, '0x1237');
      assert.deepEqual([await count('host'), await count('parse'), await count('route'), await count('auth')], [1, 1, 1, 0]);
    } finally {
      c.ws.close();
      await g.stop();
    }
  });
});

describe('the WebSocket lane against anvil, with the client kit and both adapters', () => {
  let anvil: Anvil;
  let g: Gate;
  const k = newKey();
  const chainOf = (url: string) =>
    ({ id: 4663, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } }) as const;

  before(async () => {
    anvil = await startAnvil({ port: await freePort(), chainId: 4663 });
    g = await startGate({
      chainB: false,
      sequencers: [anvil.url],
      accounts: [{ id: 'mm', keys: [k], allowUntipped: true }],
      config: { allowUntipped: true, websocket: { ...WS, maxInFlight: 512 } },
    });
  });
  after(async () => {
    await g.stop();
    await anvil.stop();
  });

  it('hundreds in flight on one connection: all accepted by anvil and mined', async () => {
    const chainRpc = createPublicClient({ transport: http(anvil.url) });
    // 300 senders funded on the chain, one transaction each: no nonce depends on another, so
    // the order the forwards reach anvil in cannot leave one waiting behind a gap.
    const senders = Array.from({ length: 300 }, () => privateKeyToAccount(generatePrivateKey()));
    for (const a of senders) await chainRpc.request({ method: 'anvil_setBalance' as never, params: [a.address, '0x56bc75e2d63100000'] as never });
    const raws = await Promise.all(senders.map((a) => sign1559({ account: a, nonce: 0, ...LOCAL_FEES })));
    const c = await connected(g.port, k);
    try {
      const answers = await Promise.all(raws.map((raw, i) => c.call('eth_sendRawTransaction', [raw], i)));
      for (const [i, a] of answers.entries()) assert.equal(a.result, txHash(raws[i]!), JSON.stringify(a));
      for (const raw of raws) assert.equal((await chainRpc.waitForTransactionReceipt({ hash: txHash(raw) as Hex, timeout: 20_000 })).status, 'success');
    } finally {
      c.ws.close();
    }
  });

  it('the client kit over ws://: connect checks the chain id, submitAndWait is mined, many submissions share one connection', async () => {
    const gate = await connectTxgate({ url: `ws://127.0.0.1:${g.port}`, apiKey: k, chainId: 4663, chainRpcUrl: anvil.url });
    try {
      const chainRpc = createPublicClient({ transport: http(anvil.url) });
      const base = await chainRpc.getTransactionCount({ address: SIGNERS[0]!.address, blockTag: 'pending' });
      const raws = await Promise.all(Array.from({ length: 20 }, (_, i) => sign1559({ signer: 0, nonce: base + i, ...LOCAL_FEES })));
      const outs = await Promise.all(raws.map((r) => gate.submit(r)));
      assert.deepEqual(
        outs.map((o) => o.kind),
        raws.map(() => 'accepted'),
      );
      // The 20 went in flight together, so anvil may hold one above a gap for a later block:
      // the next one is signed by another sender.
      const more = await signNext(anvil.url, 1);
      const mined = await gate.submitAndWait(more, { timeoutMs: 20_000 });
      assert.equal(mined.kind, 'mined', JSON.stringify(mined));
      const opens = g.logs.filter((l) => l.includes('"msg":"websocket open"') && l.includes('"account":"mm"')).length;
      assert.ok(opens >= 1);
      const tips = await gate.tipAddresses();
      assert.ok(Array.isArray(tips.tipAddresses), 'GET /tip-addresses still over HTTP');
    } finally {
      await gate.close();
    }
  });

  it("the kit over ws:// with an unknown key: connect fails with the upgrade refusal's reason (unauthorized), not unreachable", async () => {
    const gate = await connectTxgate({ url: `ws://127.0.0.1:${g.port}`, apiKey: 'txg_wrong', chainId: 4663, chainRpcUrl: anvil.url }).catch((e: Error) => e);
    // eth_chainId goes over the connection too: the upgrade's 401 is the answer.
    assert.ok(gate instanceof Error);
    assert.equal((gate as { reason?: string }).reason, 'unauthorized');
  });

  it('viem: txgate({ url: "ws://…" }) sends through the lane; sendTransaction works unmodified and is mined', async () => {
    const account = SIGNERS[1]!;
    const wallet = createWalletClient({
      account,
      chain: chainOf(anvil.url),
      transport: txgate({ url: `ws://127.0.0.1:${g.port}`, apiKey: k, rpc: anvil.url }),
    });
    const hash = await wallet.sendTransaction({ to: TIP as Hex, value: MIN_TIP, chain: chainOf(anvil.url) });
    const receipt = await createPublicClient({ transport: http(anvil.url) }).waitForTransactionReceipt({ hash, timeout: 20_000 });
    assert.equal(receipt.status, 'success');
  });

  it('ethers: TxgateProvider({ url: "ws://…" }) sends through the lane; wallet.sendTransaction and tx.wait() work', async () => {
    const provider = new TxgateProvider({ url: `ws://127.0.0.1:${g.port}`, apiKey: k, rpc: anvil.url, chainId: 4663, pollingInterval: 200 });
    try {
      const wallet = new Wallet(ANVIL_KEYS[2]!, provider);
      const sent = await wallet.sendTransaction({ to: TIP, value: MIN_TIP });
      const receipt = await sent.wait(1, 20_000);
      assert.equal(receipt?.status, 1);
      assert.ok(
        g.logs.some((l) => l.includes(sent.hash) && l.includes('"reqId":"') && /"reqId":"[^"]+\.[0-9a-z]+"/.test(l)),
        'logged as a frame of a connection',
      );
    } finally {
      provider.destroy();
    }
    void JsonRpcProvider;
  });
});

describe('the kit over ws:// when the connection drops (a stand-in server injecting the fault)', () => {
  it('a call in flight on a dropped connection is uncertain (it was written), the link reopens with backoff, and the next call is answered', async () => {
    let connections = 0;
    const stand = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    stand.on('connection', (ws, req) => {
      connections++;
      assert.equal(req.headers['x-api-key'], key, 'the key goes in the upgrade header');
      assert.ok(!(req.url ?? '').includes(key), 'never in the URL');
      ws.on('message', (d) => {
        const m = JSON.parse(d.toString()) as { id: number; method: string; params: string[] };
        if (m.method === 'eth_chainId') return ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: '0x1237' }));
        // The first submission: cut the connection after reading it, unanswered.
        if (connections === 1) return ws.terminate();
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: txHash(m.params[0]!) }));
      });
    });
    await new Promise((r) => stand.once('listening', r));
    const port = (stand.address() as { port: number }).port;
    const kit = await connectTxgate({ url: `ws://127.0.0.1:${port}`, apiKey: key, chainId: 4663, chainRpcUrl: 'http://127.0.0.1:9', keepAliveMs: 0 });
    try {
      const raw = await tx();
      const first = await kit.submit(raw);
      assert.equal(first.kind, 'uncertain', JSON.stringify(first));
      const again = await eventually(async () => {
        const o = await kit.submit(raw);
        return o.kind === 'accepted' ? o : undefined;
      });
      assert.equal(again!.hash, txHash(raw));
      assert.equal(connections, 2, 'one reconnect');
    } finally {
      await kit.close();
      stand.close();
    }
  });
});
