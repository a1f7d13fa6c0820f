/**
 * TLS through the real CLI process: start-up refuses a certificate that does not load (one line,
 * exit 1, the passphrase never written), an encrypted key opened with its passphrase from the
 * environment, SIGHUP rotating the certificate in every worker thread, and SIGTERM draining.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { eventually, keysInLogs } from './support/harness.js';
import { runCli, startCli, writeCliConfig } from './support/processes.js';
import { makeCa, makeLeaf, type Leaf, type TestCa } from './support/tls-certs.js';

let dir: string;
let ca: TestCa;
let leaf: Leaf;
const PASS_ENV = 'TXGATE_TEST_TLS_PASSPHRASE';
const PASSPHRASE = 'tls-passphrase-never-logged';

const chains = [{ chainId: 4663, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }];

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'txgate-tls-cli-'));
  ca = makeCa(dir);
  leaf = makeLeaf(ca, 'localhost', { stem: 'server' });
  writeFileSync(join(dir, 'accounts.json'), JSON.stringify({ accounts: [] }));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(keysInLogs(), []);
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
      await eventually(async () => (await Promise.all(Array.from({ length: 16 }, () => fingerprint(cli.port)))).every((f) => f === next.fingerprint), 10_000);
      const rotated = cli
        .out()
        .split('\n')
        .filter((l) => l.includes('certificate rotated') && l.includes('"level":"info"'));
      assert.ok(rotated.length >= 1, 'logged');
      assert.ok(
        rotated.every((l) => l.includes('"worker":0')),
        'one thread speaks for the process',
      );
    } finally {
      cli.proc.kill('SIGTERM');
    }
    const code = await new Promise((r) => cli.proc.once('exit', (c) => r(c)));
    assert.equal(code, 0);
  });
});
