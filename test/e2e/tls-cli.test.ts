/**
 * TLS through the real CLI process: start-up refuses a certificate that does not load (one line,
 * exit 1, the passphrase never written), an encrypted key opened with its passphrase from the
 * environment, SIGHUP rotating the certificate in every worker thread, and SIGTERM draining.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { before, describe, it } from 'node:test';
import { eventually } from '../support/harness.js';
import { runCli, startCli, writeCliConfig } from '../support/processes.js';
import { makeCa, makeLeaf, type Leaf, type TestCa } from '../support/tls-certs.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';
import { tempDir } from '../support/temp-dir.js';

keysNeverLogged();

let dir: string;
let ca: TestCa;
let leaf: Leaf;
const PASS_ENV = 'TXGATE_TEST_TLS_PASSPHRASE';
const PASSPHRASE = 'tls-passphrase-never-logged';

const chains = [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }];

before(() => {
  dir = tempDir('txgate-tls-cli-');
  ca = makeCa(dir);
  leaf = makeLeaf(ca, 'localhost', { stem: 'server' });
  writeFileSync(join(dir, 'accounts.json'), JSON.stringify({ accounts: [] }));
});

const config = (tls: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  writeCliConfig(dir, { listen: { host: '127.0.0.1', port: 0, tls: { enabled: true, ...tls } }, chains, ...extra });

function fingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca: ca.pem }, () => {
      resolve(s.getPeerX509Certificate()!.fingerprint256);
      s.destroy();
    });
    s.once('error', reject);
  });
}

describe('start-up', () => {
  it('a missing certificate, a key not matching, an encrypted key without its passphrase: one line on stderr, exit 1', async () => {
    const other = makeLeaf(ca, 'other.example', { stem: 'other' });
    const locked = makeLeaf(ca, 'localhost', { stem: 'locked', passphrase: PASSPHRASE });
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ certFile: join(dir, 'missing.pem'), keyFile: leaf.keyFile }, /^txgate: listen\.tls: cannot read the certificate .*missing\.pem \(ENOENT\)\n$/],
      [{ certFile: leaf.certFile, keyFile: other.keyFile }, /^txgate: listen\.tls: the key .*other\.key is not the key of the certificate .*server\.pem\n$/],
      [{ certFile: locked.certFile, keyFile: locked.keyFile }, /^txgate: listen\.tls: the key .*locked\.key is encrypted and no passphraseEnv is set\n$/],
    ];
    for (const [tls, line] of cases) {
      const r = await runCli(config(tls));
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, line);
      assert.doesNotMatch(r.stdout, /txgate listening/);
    }
  });

  it('an encrypted key opened with the passphrase from the environment; a wrong one refused without being written anywhere', async () => {
    const locked = makeLeaf(ca, 'localhost', { stem: 'locked2', passphrase: PASSPHRASE });
    const file = config({ certFile: locked.certFile, keyFile: locked.keyFile, passphraseEnv: PASS_ENV });
    process.env[PASS_ENV] = 'not-the-passphrase';
    try {
      const r = await runCli(file);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /^txgate: listen\.tls: the key .*locked2\.key is encrypted and the passphrase does not open it\n$/);
      assert.ok(!(r.stdout + r.stderr).includes('not-the-passphrase'));
      process.env[PASS_ENV] = PASSPHRASE;
      const cli = await startCli(file);
      try {
        assert.equal(await fingerprint(cli.port), locked.fingerprint);
        assert.match(cli.out(), /"tls":true/);
      } finally {
        cli.proc.kill('SIGTERM');
        await new Promise((r) => cli.proc.once('exit', r));
      }
      assert.ok(!cli.out().includes(PASSPHRASE), 'the passphrase is in no log line');
    } finally {
      delete process.env[PASS_ENV];
    }
  });
});

describe('SIGHUP and SIGTERM with worker threads', () => {
  it('a new certificate and SIGHUP: every thread rotates (new handshakes all get it); SIGTERM drains and exits 0', async () => {
    const first = makeLeaf(ca, 'localhost', { stem: 'hup' });
    const cli = await startCli(config({ certFile: first.certFile, keyFile: first.keyFile }, { workers: 2 }));
    try {
      assert.equal(await fingerprint(cli.port), first.fingerprint);
      const next = makeLeaf(ca, 'localhost', { stem: 'hup' });
      cli.proc.kill('SIGHUP');
      // Every thread rotated: many new handshakes, spread over both threads by the kernel, all get the new one.
      // (A handshake the kernel queued on the old listen socket the instant it closed is reset: docs/operations.md#tls.)
      await eventually(
        async () => (await Promise.all(Array.from({ length: 16 }, () => fingerprint(cli.port).catch(() => 'reset')))).every((f) => f === next.fingerprint),
        10_000,
      );
      // Worker threads' lines reach stdout in batches.
      const rotated = await eventually(() => {
        const lines = cli
          .out()
          .split('\n')
          .filter((l) => l.includes('certificate rotated') && l.includes('"level":"info"'));
        return lines.length > 0 ? lines : null;
      }, 10_000);
      assert.ok(
        rotated!.every((l) => l.includes('"worker":0')),
        'one thread speaks for the process',
      );
    } finally {
      cli.proc.kill('SIGTERM');
    }
    const code = await new Promise((r) => cli.proc.once('exit', (c) => r(c)));
    assert.equal(code, 0);
  });
});

describe('npm start -- --tls', () => {
  it('the development CA is made once and kept; the server certificate is made at each start, for localhost, and loads', async () => {
    const { makeDevTls } = await import('../../src/dev/dev-tls.js');
    const { loadPair } = await import('../../src/tls/pair.js');
    const dev = join(dir, 'dev');
    const first = makeDevTls(dev);
    const ca1 = readFileSync(first.caFile, 'utf8');
    const pair1 = loadPair({ field: 'listen.tls', certFile: first.certFile, keyFile: first.keyFile, passphrase: null });
    const second = makeDevTls(dev);
    assert.equal(readFileSync(second.caFile, 'utf8'), ca1, 'the CA is kept: trusted once');
    const pair2 = loadPair({ field: 'listen.tls', certFile: second.certFile, keyFile: second.keyFile, passphrase: null });
    assert.notEqual(pair2.fingerprint, pair1.fingerprint, 'a fresh server certificate');
    const x509 = new X509Certificate(readFileSync(second.certFile));
    assert.ok(x509.verify(new X509Certificate(ca1).publicKey), 'signed by the development CA');
    assert.ok(x509.checkHost('localhost') !== undefined && x509.checkIP('127.0.0.1') !== undefined);
  });
});
