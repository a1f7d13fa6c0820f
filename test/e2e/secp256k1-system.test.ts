/**
 * The optional system-libsecp256k1 binding (crypto.secp256k1 = "system"): it must recover
 * exactly what the npm binding recovers, refuse exactly what it refuses (same codes), and the
 * decoder on it must still agree with the 168 Ethereum test vectors. Start-up with it logs
 * which library is in use. Skipped only where the binding was not built (`npm run
 * build:secp256k1`, which needs Debian's libsecp256k1-dev; CI builds it when it can).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { initCrypto, npmSecp256k1Addon, secp256k1, secp256k1Binding, SYSTEM_SECP256K1_PATH, systemSecp256k1Addon } from '../../src/base/native.js';
import { TxDecoder } from '../../src/tx/decoder.js';
import { VECTORS, vectorMismatches } from '../support/vectors.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';
import { tempDir } from '../support/temp-dir.js';

keysNeverLogged();

const built = existsSync(SYSTEM_SECP256K1_PATH);
const skip = built ? false : `not built: ${SYSTEM_SECP256K1_PATH} (npm run build:secp256k1)`;
const N = Buffer.from('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141', 'hex');

describe('system libsecp256k1 binding', () => {
  it('recovers the same public keys as the npm binding', { skip }, () => {
    const sys = systemSecp256k1Addon();
    const npm = npmSecp256k1Addon();
    const s = secp256k1();
    const a = new Uint8Array(65);
    const b = new Uint8Array(65);
    for (let i = 0; i < 300; i++) {
      const key = randomBytes(32);
      const msg = randomBytes(32);
      const { signature, recid } = s.ecdsaSign(msg, key);
      assert.equal(sys.ecdsaRecover(a, signature, recid, msg), 0);
      assert.equal(npm.ecdsaRecover(b, signature, recid, msg), 0);
      assert.deepEqual(a, b);
      assert.deepEqual(Buffer.from(a), Buffer.from(s.publicKeyCreate(key, false)));
      // The other parity recovers a different key (or none), the same on both.
      const codeSys = sys.ecdsaRecover(a, signature, recid ^ 1, msg);
      assert.equal(codeSys, npm.ecdsaRecover(b, signature, recid ^ 1, msg));
      if (codeSys === 0) assert.deepEqual(a, b);
    }
  });

  it('refuses what the npm binding refuses, with the same code', { skip }, () => {
    const sys = systemSecp256k1Addon();
    const npm = npmSecp256k1Addon();
    const msg = randomBytes(32);
    const sig = (r: Buffer, s: Buffer) => Uint8Array.from(Buffer.concat([r, s]));
    const one = Buffer.alloc(32);
    one[31] = 1;
    const cases = {
      'r = 0': sig(Buffer.alloc(32), one),
      's = 0': sig(one, Buffer.alloc(32)),
      'r = n': sig(N, one),
      's = n': sig(one, N),
      'r, s = 2^256 - 1': sig(Buffer.alloc(32, 0xff), Buffer.alloc(32, 0xff)),
      'r not an x on the curve': sig(Buffer.from('0000000000000000000000000000000000000000000000000000000000000005', 'hex'), one),
    };
    for (const [name, s] of Object.entries(cases)) {
      for (const recid of [0, 1]) {
        const code = sys.ecdsaRecover(new Uint8Array(65), s, recid, msg);
        assert.notEqual(code, 0, name);
        assert.equal(code, npm.ecdsaRecover(new Uint8Array(65), s, recid, msg), name);
      }
    }
    // Wrong sizes or types are refused (3), never read out of bounds.
    assert.equal(sys.ecdsaRecover(new Uint8Array(64), new Uint8Array(64), 0, msg), 3);
    assert.equal(sys.ecdsaRecover(new Uint8Array(65), new Uint8Array(63), 0, msg), 3);
    assert.equal(sys.ecdsaRecover(new Uint8Array(65), new Uint8Array(64), 4, msg), 3);
    assert.equal(sys.ecdsaRecover(new Uint8Array(65), new Uint8Array(64), 0, new Uint8Array(31)), 3);
    assert.equal((sys.ecdsaRecover as (...a: unknown[]) => number)(new Uint8Array(65), 'x'.repeat(64), 0, msg), 3);
  });

  it('the decoder on it agrees with every one of the 168 Ethereum test vectors', { skip }, async () => {
    await initCrypto('system');
    try {
      assert.equal(secp256k1Binding(), 'system');
      const { mismatches, decoders } = vectorMismatches((fork) => new TxDecoder(1, fork, { signature: 'recover' }));
      assert.equal(VECTORS.length, 168);
      assert.deepEqual(mismatches, []);
      assert.ok(decoders.get('cancun')!.lean, 'the lean path (the one calling the binding) was used');
    } finally {
      await initCrypto('npm');
    }
  });

  it('the service starts on it and says so', { skip }, async () => {
    const dir = tempDir('txgate-secp-');
    writeFileSync(join(dir, 'accounts.json'), '{"accounts":[]}');
    const cfg = join(dir, 'config.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        listen: { host: '127.0.0.1', port: 0 },
        internal: { enabled: false },
        workers: 1,
        crypto: { secp256k1: 'system' },
        chains: [{ chainId: DEV_CHAIN_ID, hosts: ['localhost'], sequencers: ['http://127.0.0.1:9'] }],
      }),
    );
    const child = spawn(process.execPath, [join(import.meta.dirname, '../../src/cli.js'), '--config', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('txgate listening')) child.kill('SIGTERM');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await new Promise((r) => child.once('exit', r));
    clearTimeout(timer);
    assert.equal(code, 0);
    const line = out.split('\n').find((l) => l.includes('txgate listening'))!;
    assert.equal((JSON.parse(line) as { secp256k1: string }).secp256k1, 'system');
  });
});
