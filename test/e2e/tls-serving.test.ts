/**
 * TLS on the public port (`listen.tls`), with real TLS clients and certificates made here by a
 * throw-away CA (openssl): undici, node's tls, curl, openssl s_client, a WebSocket client over
 * wss://; SNI choosing each host's certificate; SNI and Host disagreeing (the Host rules);
 * rotation on file change and SIGHUP while a keep-alive connection and a WebSocket stay open; a
 * bad new certificate refused with the one in force kept; a client stalling in the handshake.
 * Certificates checked before they are served: tls-pairs.test.ts; the client kit and adapters
 * over https:// and wss:// against anvil: test/chain/tls-kit.test.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { after, describe, it } from 'node:test';
import { Agent, fetch } from 'undici';
import WebSocket from 'ws';
import { eventually, newKey, startGate } from '../support/harness.js';
import { sign1559 } from '../support/txs.js';
import { makeCa, makeLeaf, type Leaf, type TestCa } from '../support/tls-certs.js';
import { StubSequencer } from '../support/stub-sequencer.js';
import { useGate } from '../support/gate-fixture.js';

const A = 'fast.chain-a.example';
const B = 'fast.chain-b.example';
const key = newKey();
const CHAIN_ID = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}';

let dir: string;
let ca: TestCa;
let def: Leaf;
let leafA: Leaf;
let leafB: Leaf;
let stub: StubSequencer;

const tlsConfig = () => ({
  enabled: true,
  certFile: def.certFile,
  keyFile: def.keyFile,
  hosts: [
    { names: [A], certFile: leafA.certFile, keyFile: leafA.keyFile },
    { names: [B, '*.wild.example'], certFile: leafB.certFile, keyFile: leafB.keyFile },
  ],
});

const gate = useGate(async () => {
  dir = mkdtempSync(join(tmpdir(), 'txgate-tls-test-'));
  ca = makeCa(dir);
  def = makeLeaf(ca, 'default.test', { stem: 'default' });
  leafA = makeLeaf(ca, A, { stem: 'a' });
  leafB = makeLeaf(ca, B, { stem: 'b' });
  stub = await new StubSequencer().start();
  return {
    sequencers: [stub.url],
    accounts: [{ id: 'mm', keys: [key], allowUntipped: true }],
    config: { listen: { host: '127.0.0.1', port: 0, tls: tlsConfig() }, websocket: { enabled: true } },
    internal: true,
  };
});
after(async () => {
  await stub.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A TLS connection to the gate with this server name (none: no SNI), its certificate's fingerprint and a request helper. */
async function tlsSocket(servername: string | undefined, o: { minVersion?: 'TLSv1.2' | 'TLSv1.3'; maxVersion?: 'TLSv1.2' | 'TLSv1.3' } = {}) {
  const sock = await new Promise<TLSSocket>((resolve, reject) => {
    // The fingerprint says which certificate came (the names in it are not what is tested here).
    const s = tlsConnect(
      {
        host: '127.0.0.1',
        port: gate.port,
        ca: ca.pem,
        checkServerIdentity: () => undefined,
        ...(servername !== undefined ? { servername } : {}),
        ...o,
        ALPNProtocols: ['h2', 'http/1.1'],
      },
      () => resolve(s),
    );
    s.once('error', reject);
  });
  let buf = '';
  sock.on('data', (d: Buffer) => (buf += d.toString()));
  return {
    sock,
    fingerprint: sock.getPeerX509Certificate()!.fingerprint256,
    /** One POST on this connection (kept alive): its status line and body. */
    async post(host: string, body = CHAIN_ID): Promise<{ status: string; body: string }> {
      buf = '';
      sock.write(`POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      const text = await eventually((): string | null => {
        const i = buf.indexOf('\r\n\r\n');
        if (i < 0) return null;
        const len = Number(/content-length: (\d+)/i.exec(buf.slice(0, i))?.[1] ?? '0');
        return buf.length >= i + 4 + len ? buf : null;
      });
      if (text === null) throw new Error('no answer');
      return { status: text.split('\r\n')[0]!, body: text.slice(text.indexOf('\r\n\r\n') + 4) };
    },
  };
}

const fingerprintOf = async (servername?: string) => {
  const t = await tlsSocket(servername);
  t.sock.destroy();
  return t.fingerprint;
};

function run(cmd: string, args: string[], input = ''): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const p = execFile(cmd, args, { timeout: 20_000 }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, out: stdout + stderr }),
    );
    p.stdin?.end(input);
  });
}

/** Replaces a file atomically (temp, then rename), as a deploy tool or certbot does. */
function replace(file: string, content: Buffer | string): void {
  writeFileSync(`${file}.tmp`, content);
  renameSync(`${file}.tmp`, file);
}

describe('HTTPS on the public port', () => {
  it('undici fetch with the CA trusted: eth_chainId answered, the internal listener stays plain HTTP', async () => {
    const dispatcher = new Agent({ connect: { ca: ca.pem } });
    const r = await fetch(`https://localhost:${gate.port}/`, { method: 'POST', body: CHAIN_ID, headers: { 'content-type': 'application/json' }, dispatcher });
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { jsonrpc: '2.0', id: 1, result: '0x1237' });
    const health = await fetch(`https://localhost:${gate.port}/health`, { dispatcher });
    assert.equal(health.status, 200);
    const metrics = await fetch(`http://127.0.0.1:${gate.internalPort}/metrics`);
    assert.equal(metrics.status, 200);
    await dispatcher.close();
  });

  it('a client that does not trust the CA is refused in the handshake', async () => {
    const e = await fetch(`https://localhost:${gate.port}/health`).catch((err: Error) => err);
    assert.ok(e instanceof Error);
    assert.match(String((e as { cause?: Error }).cause?.message ?? e.message), /self[- ]signed|unable to verify|certificate/i);
  });

  it('SNI chooses the host certificate; another name and no name get the default one', async () => {
    assert.equal(await fingerprintOf(A), leafA.fingerprint);
    assert.equal(await fingerprintOf(B), leafB.fingerprint);
    assert.equal(await fingerprintOf('x.wild.example'), leafB.fingerprint, 'a wildcard name: one label');
    assert.equal(await fingerprintOf('x.y.wild.example'), def.fingerprint);
    assert.equal(await fingerprintOf('other.example'), def.fingerprint);
    assert.equal(await fingerprintOf('localhost'), def.fingerprint);
    assert.equal(await fingerprintOf(undefined), def.fingerprint);
  });

  it('SNI and Host disagreeing: the Host header chooses the chain (the SNI only the certificate)', async () => {
    const t = await tlsSocket(A);
    try {
      assert.equal(t.fingerprint, leafA.fingerprint);
      const asB = await t.post(B);
      assert.match(asB.status, /^HTTP\/1\.1 200/);
      assert.equal(JSON.parse(asB.body).result, '0xa', "chain 10, the Host header's");
      const unknown = await t.post('nowhere.example');
      assert.match(unknown.status, /^HTTP\/1\.1 421/);
      assert.equal(JSON.parse(unknown.body).error.data.reason, 'misdirected_host');
    } finally {
      t.sock.destroy();
    }
  });

  it('the framing rules hold over TLS: two Content-Length headers are refused 400 and the connection closed', async () => {
    const t = await tlsSocket(A);
    const closed = new Promise<void>((r) => t.sock.once('close', () => r()));
    let text = '';
    t.sock.on('data', (d: Buffer) => (text += d.toString()));
    t.sock.write(`POST / HTTP/1.1\r\nHost: ${A}\r\nContent-Length: ${CHAIN_ID.length}\r\nContent-Length: ${CHAIN_ID.length}\r\n\r\n${CHAIN_ID}`);
    await closed;
    assert.match(text, /^HTTP\/1\.1 400/);
  });

  it('curl: HTTPS with the CA, HTTP/1.1 (asked for HTTP/2, it falls back to HTTP/1.1)', async () => {
    const base = ['-s', '--cacert', ca.certFile, '--resolve', `${A}:${gate.port}:127.0.0.1`, '-H', 'content-type: application/json', '--data', CHAIN_ID];
    const r = await run('curl', [...base, '-w', '\n%{http_version} %{ssl_verify_result}', `https://${A}:${gate.port}/`]);
    assert.equal(r.code, 0, r.out);
    const [body, tail] = r.out.split('\n');
    assert.equal(JSON.parse(body!).result, '0x1237');
    assert.equal(tail, '1.1 0');
    const h2 = await run('curl', [...base, '--http2', '-w', '\n%{http_version}', `https://${A}:${gate.port}/`]);
    assert.equal(h2.out.split('\n')[1], '1.1');
  });

  it('openssl s_client: TLS 1.0 and 1.1 refused, 1.2 and 1.3 served; no ALPN protocol is selected (the client speaks HTTP/1.1)', async () => {
    const sClient = (args: string[]) =>
      run('openssl', ['s_client', '-connect', `127.0.0.1:${gate.port}`, '-servername', A, '-CAfile', ca.certFile, ...args], 'Q\n');
    for (const old of ['-tls1', '-tls1_1']) {
      const r = await sClient([old, '-cipher', 'DEFAULT@SECLEVEL=0']);
      assert.notEqual(r.code, 0, `${old} was served: ${r.out}`);
      assert.match(r.out, /no peer certificate available/);
      assert.match(r.out, /Cipher is \(NONE\)/);
      assert.match(r.out, /alert protocol version/);
    }
    for (const [flag, version] of [
      ['-tls1_2', 'TLSv1.2'],
      ['-tls1_3', 'TLSv1.3'],
    ] as const) {
      const r = await sClient([flag]);
      assert.match(r.out, new RegExp(`New, ${version.replace('.', '\\.')}, Cipher is `), r.out);
      assert.match(r.out, /Verify return code: 0 \(ok\)/);
      assert.match(r.out, new RegExp(`subject=CN ?= ?${A.replace(/\./g, '\\.')}`));
    }
    const alpn = await sClient(['-alpn', 'h2,http/1.1']);
    assert.match(alpn.out, /No ALPN negotiated/);
  });

  it('wss:// on the same port: the WebSocket transport answers over TLS', async () => {
    const ws = new WebSocket(`wss://localhost:${gate.port}/`, { headers: { 'x-api-key': key }, ca: ca.pem, perMessageDeflate: false });
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    const answer = await new Promise<string>((r) => {
      ws.once('message', (d) => r(d.toString()));
      ws.send(CHAIN_ID);
    });
    assert.equal(JSON.parse(answer).result, '0x1237');
    ws.close();
  });

  it('the expiry of every certificate in force is a metric, by host', async () => {
    const text = await (await fetch(`http://127.0.0.1:${gate.internalPort}/metrics`)).text();
    const notAfter = (l: Leaf) => Math.floor(Date.parse(new X509Certificate(readFileSync(l.certFile)).validTo) / 1000);
    assert.match(text, new RegExp(`txgate_tls_certificate_expiry_seconds\\{host="${A.replace(/\./g, '\\.')}"\\} ${notAfter(leafA)}`));
    assert.match(text, new RegExp(`txgate_tls_certificate_expiry_seconds\\{host="\\*"\\} ${notAfter(def)}`));
    assert.match(text, /txgate_tls_reloads_total\{result="invalid"\} 0/);
  });

  it('a client stalling in the handshake is closed by the server, and the port keeps serving meanwhile', async () => {
    const stalled = netConnect(gate.port, '127.0.0.1');
    await new Promise((r) => stalled.once('connect', r));
    // The first bytes of a TLS record header, then nothing.
    stalled.write(Buffer.from([0x16, 0x03, 0x01]));
    const closed = new Promise<void>((r) => stalled.once('close', () => r()));
    stalled.on('error', () => {});
    const t = await tlsSocket(A);
    assert.match((await t.post(A)).status, /^HTTP\/1\.1 200/);
    t.sock.destroy();
    await Promise.race([closed, new Promise((_, j) => setTimeout(() => j(new Error('the stalled handshake was never closed')), 30_000))]);
  });
});

describe('drain over TLS', () => {
  it('SIGTERM (stop): a submission in flight on a kept-alive TLS connection is answered, then the connection is closed', async () => {
    const slow = await new StubSequencer().start();
    slow.delayMs = 400;
    const g = await startGate({
      chainB: false,
      sequencers: [slow.url],
      accounts: [{ id: 'mm', keys: [key], allowUntipped: true }],
      config: { listen: { host: '127.0.0.1', port: 0, tls: { enabled: true, certFile: def.certFile, keyFile: def.keyFile } } },
    });
    try {
      const sock = await new Promise<TLSSocket>((resolve, reject) => {
        const s = tlsConnect({ host: '127.0.0.1', port: g.port, servername: 'localhost', ca: ca.pem }, () => resolve(s));
        s.once('error', reject);
      });
      let text = '';
      sock.on('data', (d: Buffer) => (text += d.toString()));
      const closed = new Promise<void>((r) => sock.once('close', () => r()));
      const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_sendRawTransaction', params: [await sign1559({ nonce: 900 })] });
      sock.write(`POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-Api-Key: ${key}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      await eventually(() => slow.calls.some((c) => c.method === 'eth_sendRawTransaction'));
      const stopped = g.stop();
      await closed;
      await stopped;
      assert.match(text, /^HTTP\/1\.1 200/, text);
      assert.match(text, /connection: close/i, 'the answer says the connection closes');
      assert.match(text, /"id":7,"result":"0x[0-9a-f]{64}"/);
    } finally {
      await slow.stop();
    }
  });
});

describe('rotation without a restart', () => {
  it('a changed certificate is served to new handshakes; an open keep-alive connection and a WebSocket keep theirs and go on', async () => {
    const kept = await tlsSocket(A);
    const ws = new WebSocket(`wss://127.0.0.1:${gate.port}/`, {
      headers: { 'x-api-key': key, host: A },
      ca: ca.pem,
      perMessageDeflate: false,
      ...{ servername: A },
    });
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    const old = leafA.fingerprint;
    leafA = makeLeaf(ca, A, { stem: 'a' });
    def = makeLeaf(ca, 'default.test', { stem: 'default' });
    assert.notEqual(leafA.fingerprint, old);
    // The file watcher: no signal needed.
    await eventually(async () => (await fingerprintOf(A)) === leafA.fingerprint, 10_000);
    await eventually(async () => (await fingerprintOf('other.example')) === def.fingerprint, 10_000);
    assert.equal(kept.fingerprint, old);
    assert.match((await kept.post(A)).status, /^HTTP\/1\.1 200/, 'the open connection is served on');
    const answer = await new Promise<string>((r) => {
      ws.once('message', (d) => r(d.toString()));
      ws.send(CHAIN_ID);
    });
    assert.equal(JSON.parse(answer).result, '0x1237');
    ws.close();
    kept.sock.destroy();
    assert.ok(gate.logs.some((l) => l.includes('certificate rotated') && l.includes(leafA.fingerprint)));
  });

  it('SIGHUP (reload) with nothing changed: unchanged, nothing rotated', async () => {
    const results = gate.app.tls!.reload('SIGHUP');
    assert.deepEqual(results, ['unchanged', 'unchanged', 'unchanged']);
    assert.equal(await fingerprintOf(A), leafA.fingerprint);
  });

  it('a bad new certificate is refused with one log line; the one in force stays (not PEM, key not matching)', async () => {
    const good = { cert: readFileSync(leafA.certFile), key: readFileSync(leafA.keyFile) };
    const before = gate.logs.length;
    replace(leafA.certFile, 'not a certificate\n');
    await eventually(() => gate.logs.slice(before).some((l) => l.includes('is not a PEM certificate')), 10_000);
    assert.equal(await fingerprintOf(A), leafA.fingerprint);
    const line = gate.logs.slice(before).find((l) => l.includes('is not a PEM certificate'))!;
    assert.match(line, /"level":"error"/);
    assert.match(line, /the certificate in force stays/);
    replace(leafA.certFile, good.cert);
    replace(leafA.keyFile, readFileSync(leafB.keyFile));
    await eventually(() => gate.logs.slice(before).some((l) => l.includes('is not the key of the certificate')), 10_000);
    assert.equal(await fingerprintOf(A), leafA.fingerprint);
    const results = gate.app.tls!.reload('SIGHUP');
    assert.equal(results[1], 'invalid', 'SIGHUP says it again');
    replace(leafA.keyFile, good.key);
    assert.deepEqual(gate.app.tls!.reload('SIGHUP'), ['unchanged', 'unchanged', 'unchanged'], 'back to the bytes in force');
    const text = await (await fetch(`http://127.0.0.1:${gate.internalPort}/metrics`)).text();
    assert.match(text, /txgate_tls_reloads_total\{result="invalid"\} [1-9]/);
    assert.match(text, /txgate_tls_reloads_total\{result="rotated"\} [1-9]/);
  });
});
