/**
 * Certificates checked before they are served (`listen.tls`): an expired one refused naming the
 * file and the date, a key not the certificate's, a missing file, an encrypted key without its
 * passphrase, and the configuration's own checks; certificates made by a throw-away CA (openssl).
 * Serving them: tls-serving.test.ts.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { makeCa, makeLeaf, type Leaf, type TestCa } from '../support/tls-certs.js';
import { parseConfig, type ConfigError } from '../../src/config/config.js';
import { loadPair, PairError } from '../../src/tls/pair.js';
import { tempDir } from '../support/temp-dir.js';

const A = 'fast.chain-a.example';
const B = 'fast.chain-b.example';

let dir: string;
let ca: TestCa;
let leafA: Leaf;
let leafB: Leaf;

before(() => {
  dir = tempDir('txgate-tls-pairs-');
  ca = makeCa(dir);
  leafA = makeLeaf(ca, A, { stem: 'a' });
  leafB = makeLeaf(ca, B, { stem: 'b' });
});

describe('certificates checked before they are served', () => {
  it('an expired certificate is refused, naming the file and the date', () => {
    const src = { field: 'listen.tls', certFile: leafB.certFile, keyFile: leafB.keyFile, passphrase: null };
    assert.doesNotThrow(() => loadPair(src));
    const later = Date.now() + 3 * 86_400_000;
    assert.throws(
      () => loadPair(src, later),
      (e: Error) => e instanceof PairError && /listen\.tls: the certificate .*b\.pem expired on /.test(e.message),
    );
  });

  it("a key that is not the certificate's, a missing file, an encrypted key without its passphrase: one line each", () => {
    const mismatch = { field: 'listen.tls.hosts[0]', certFile: leafA.certFile, keyFile: leafB.keyFile, passphrase: null };
    assert.throws(() => loadPair(mismatch), /listen\.tls\.hosts\[0\]: the key .* is not the key of the certificate/);
    assert.throws(() => loadPair({ ...mismatch, certFile: join(dir, 'nope.pem') }), /cannot read the certificate .*nope\.pem \(ENOENT\)/);
    const locked = makeLeaf(ca, 'locked.example', { passphrase: 'correct horse' });
    const src = { field: 'listen.tls', certFile: locked.certFile, keyFile: locked.keyFile, passphrase: null };
    assert.throws(() => loadPair(src), /is encrypted and no passphraseEnv is set/);
    assert.throws(
      () => loadPair({ ...src, passphrase: 'wrong' }),
      (e: Error) => /the passphrase does not open it/.test(e.message) && !e.message.includes('wrong'),
    );
    assert.equal(loadPair({ ...src, passphrase: 'correct horse' }).fingerprint, locked.fingerprint);
  });

  it('the configuration: files required with enabled, a server name listed once, the passphrase variable set', () => {
    const base = { chains: [{ chainId: 1, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }] };
    const problems = (tls: unknown, env: NodeJS.ProcessEnv = {}) => {
      try {
        parseConfig({ ...base, listen: { tls } }, dir, env);
        return [];
      } catch (e) {
        return (e as ConfigError).problems;
      }
    };
    assert.deepEqual(problems({ enabled: false }), []);
    assert.deepEqual(problems({ enabled: true }), [
      'listen.tls.certFile: required by listen.tls.enabled',
      'listen.tls.keyFile: required by listen.tls.enabled',
    ]);
    assert.deepEqual(problems({ enabled: true, certFile: 'c', keyFile: 'k', hosts: [{ names: ['a.example', 'A.example'], certFile: 'c', keyFile: 'k' }] }), [
      'listen.tls.hosts[0].names: a.example is listed twice',
    ]);
    assert.deepEqual(problems({ enabled: true, certFile: 'c', keyFile: 'k', passphraseEnv: 'TLS_PASS' }), [
      'listen.tls.passphraseEnv: the environment variable TLS_PASS is not set',
    ]);
    assert.deepEqual(problems({ enabled: true, certFile: 'c', keyFile: 'k', passphraseEnv: 'TLS_PASS' }, { TLS_PASS: 'x' }), []);
    assert.deepEqual(problems({ enabled: true, certFile: 'c', keyFile: 'k', hosts: [{ names: ['bad name'], certFile: 'c', keyFile: 'k' }] }), [
      'listen.tls.hosts[0].names[0]: must be a server name (a hostname, or *. and a hostname)',
    ]);
  });
});
