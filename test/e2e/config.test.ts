/** Configuration: defaults, validation reporting every problem with its field, CLI exit codes. */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config/config.js';
import { createRequire } from 'node:module';
import { uws } from '../../src/base/native.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

keysNeverLogged();

const CLI = join(import.meta.dirname, '../../src/cli.js');
const minimal = { chains: [{ chainId: DEV_CHAIN_ID, hosts: ['Fast.Chain-A.example'], sequencers: ['http://127.0.0.1:8547'] }] };

describe('configuration', () => {
  it('everything but chains has a default', () => {
    const c = parseConfig(minimal, '/etc/txgate', {});
    assert.deepEqual(c.listen, { host: '0.0.0.0', port: 8080, tls: { enabled: false, certFile: null, keyFile: null, passphraseEnv: null, hosts: [] } });
    assert.deepEqual(c.internal, { enabled: true, host: '127.0.0.1', port: 9464 });
    assert.deepEqual(c.limits, { maxBodyBytes: 65536, chainIdMaxBodyBytes: 512, maxBufferedBodyBytes: 64 * 1024 * 1024 });
    assert.equal(c.allowUntipped, false);
    assert.equal(c.accounts.file, '/etc/txgate/accounts.json');
    assert.deepEqual(c.chains[0]!.forward, {
      strategy: 'failover',
      timeoutMs: 2000,
      maxInFlight: 1024,
      connections: 128,
      queueMs: 1000,
      wsConnections: 2,
      keepWarm: { idleMs: 2000, connections: 2 },
    });
    assert.deepEqual(c.chains[0]!.hosts, ['fast.chain-a.example']);
    assert.equal(c.chains[0]!.hardfork, 'prague');
    assert.ok(c.workers >= 1);
    assert.deepEqual(c.crypto, { secp256k1: 'npm', signature: 'curve' });
    assert.equal(c.busyPoll, false);
    assert.ok(Object.isFrozen(c) && Object.isFrozen(c.chains[0]!.forward), 'deep-frozen');
  });
  it('keep-warm: 0 turns it off; a negative or fractional idle time, or no connection kept, is refused naming the field', () => {
    const chain = (keepWarm: unknown) => ({ ...minimal, chains: [{ ...(minimal.chains[0] as object), forward: { keepWarm } }] });
    assert.deepEqual(parseConfig(chain({ idleMs: 0 }), '/', {}).chains[0]!.forward.keepWarm, { idleMs: 0, connections: 2 });
    for (const [bad, field] of [
      [{ idleMs: -1 }, 'idleMs'],
      [{ idleMs: 1.5 }, 'idleMs'],
      [{ connections: 0 }, 'connections'],
    ] as const)
      assert.throws(
        () => parseConfig(chain(bad), '/', {}),
        (e: ConfigError) => e.problems.some((p) => p.startsWith(`chains[0].forward.keepWarm.${field}`)),
        JSON.stringify(bad),
      );
  });
  it('chains are required', () => {
    assert.throws(
      () => parseConfig({}, '/', {}),
      (e: ConfigError) => e.problems.includes('chains: required (at least one chain)'),
    );
  });
  it('reports every problem at once, naming the field', () => {
    const bad = {
      listen: { port: 70000 },
      limits: { maxBodyBytes: 100000 },
      workers: 0,
      color: 'blue',
      crypto: { secp256k1: 'openssl', signature: 'none' },
      chains: [
        { chainId: -1, hosts: ['a.example:80'], sequencers: ['ftp://x'], forward: { strategy: 'random' } },
        { chainId: 10, hosts: ['b.example', 'B.example'], sequencers: [] },
      ],
    };
    try {
      parseConfig(bad, '/', {});
      assert.fail('should throw');
    } catch (e) {
      assert.ok(e instanceof ConfigError);
      const want = [
        'listen.port',
        'limits.maxBodyBytes',
        'workers',
        'config.color: unknown field',
        'chains[0].chainId',
        'chains[0].hosts[0]',
        'chains[0].sequencers[0]',
        'chains[0].forward.strategy',
        'chains[1].hosts[1]: "b.example" is already bound',
        'chains[1].sequencers',
        'crypto.secp256k1: must be one of npm, system',
        'crypto.signature: must be one of recover, curve',
      ];
      for (const w of want)
        assert.ok(
          e.problems.some((p) => p.startsWith(w) || p.includes(w)),
          `missing: ${w}\n${e.problems.join('\n')}`,
        );
    }
  });
  it('sync: off by default; the chain RPC over http(s), its WebSocket over ws(s); receipt mode needs the RPC', () => {
    const c = parseConfig(minimal, '/', {}).chains[0]!;
    assert.deepEqual([c.sync.enabled, c.sync.mode, c.sync.receiptTtlMs, c.rpc, c.rpcWs], [false, 'forward', 60_000, null, null]);
    const on = parseConfig(
      {
        chains: [
          { ...minimal.chains[0], rpc: 'http://rpc.example:8545', rpcWs: 'wss://rpc.example/ws', sync: { enabled: true, mode: 'receipt', receiptTtlMs: 0 } },
        ],
      },
      '/',
      {},
    ).chains[0]!;
    assert.deepEqual([on.rpc, on.rpcWs, on.sync.receiptTtlMs], ['http://rpc.example:8545/', 'wss://rpc.example/ws', 0]);
    try {
      parseConfig({ chains: [{ ...minimal.chains[0], rpcWs: 'http://rpc.example', sync: { enabled: true, mode: 'receipt', receiptTtlMs: -1 } }] }, '/', {});
      assert.fail('should throw');
    } catch (e) {
      assert.ok(e instanceof ConfigError);
      for (const w of ['chains[0].rpcWs: must be a ws:// or wss:// URL', 'chains[0].rpc: required by sync.mode "receipt"', 'chains[0].sync.receiptTtlMs'])
        assert.ok(
          e.problems.some((p) => p.startsWith(w)),
          `missing: ${w}\n${e.problems.join('\n')}`,
        );
    }
  });
  it('flashblocks: off by default; a ws(s) URL when on, and a reader of the stream (tracking or the sync receipt mode)', () => {
    const c = parseConfig(minimal, '/', {}).chains[0]!;
    assert.deepEqual(c.flashblocks, { enabled: false, url: null, maxFrameBytes: 1 << 20, stallMs: 2_000 });
    const tracked = { ...minimal.chains[0], rpc: 'http://rpc.example:8545', track: { enabled: true } };
    const on = parseConfig({ chains: [{ ...tracked, flashblocks: { enabled: true, url: 'wss://stream.example/ws' } }] }, '/', {}).chains[0]!;
    assert.deepEqual([on.flashblocks.enabled, on.flashblocks.url], [true, 'wss://stream.example/ws']);
    const problems = (chain: Record<string, unknown>): readonly string[] => {
      try {
        parseConfig({ chains: [chain] }, '/', {});
        return [];
      } catch (e) {
        assert.ok(e instanceof ConfigError);
        return e.problems;
      }
    };
    assert.deepEqual(problems({ ...tracked, flashblocks: { enabled: true } }), [
      'chains[0].flashblocks.url: required by flashblocks.enabled (the stream to read)',
    ]);
    assert.match(
      problems({ ...tracked, flashblocks: { enabled: true, url: 'https://stream.example' } })[0]!,
      /^chains\[0\]\.flashblocks\.url: must be a ws:\/\/ or wss:\/\/ URL/,
    );
    assert.match(
      problems({ ...minimal.chains[0], flashblocks: { enabled: true, url: 'ws://s.example' } }).join('\n'),
      /flashblocks\.enabled: nothing would read the stream/,
    );
    assert.match(problems({ ...tracked, flashblocks: { enabled: true, url: 'ws://s.example', maxFrameBytes: 10 } }).join('\n'), /flashblocks\.maxFrameBytes/);
  });

  it('TXGATE_LOG_LEVEL overrides log.level', () => {
    assert.equal(parseConfig({ ...minimal, log: { level: 'warn' } }, '/', { TXGATE_LOG_LEVEL: 'debug' }).log.level, 'debug');
    assert.throws(() => parseConfig(minimal, '/', { TXGATE_LOG_LEVEL: 'loud' }), /TXGATE_LOG_LEVEL/);
  });
});

describe('the txgate command', () => {
  const dir = tempDir('txgate-cli-');
  it('exits 2 on a bad config, listing the problems on stderr', () => {
    const f = join(dir, 'bad.json');
    writeFileSync(f, JSON.stringify({ chains: [{ chainId: 'x' }] }));
    const r = spawnSync(process.execPath, [CLI, '--config', f], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /chains\[0\]\.chainId/);
    assert.match(r.stderr, /chains\[0\]\.hosts/);
  });
  it('exits 2 on unreadable or invalid JSON, and without --config', () => {
    assert.equal(spawnSync(process.execPath, [CLI, '--config', join(dir, 'missing.json')]).status, 2);
    const f = join(dir, 'broken.json');
    writeFileSync(f, '{');
    assert.equal(spawnSync(process.execPath, [CLI, '--config', f]).status, 2);
    assert.equal(spawnSync(process.execPath, [CLI]).status, 2);
  });
  it('--version prints the package version; --help describes the options, signals and exit codes', () => {
    const version = spawnSync(process.execPath, [CLI, '--version'], { encoding: 'utf8' });
    assert.equal(version.status, 0);
    assert.equal(version.stdout.trim(), `txgate ${JSON.parse(readFileSync(join(import.meta.dirname, '../../../package.json'), 'utf8')).version}`);
    const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    for (const word of ['--config', '--pretty', '--version', 'SIGTERM', 'SIGHUP', 'Exit status']) assert.ok(help.stdout.includes(word), word);
  });
  it('the package declares the txgate command (npx txgate, or on the PATH after npm link / a global install)', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../../package.json'), 'utf8'));
    assert.equal(pkg.bin.txgate, 'dist/src/cli.js');
    // Its first line starts node without the memory reducer (docs/performance.md#after-an-idle-spell), and runs as written.
    const shebang = /^#!(\/usr\/bin\/env -S node --no-memory-reducer)\n/.exec(readFileSync(CLI, 'utf8'));
    assert.ok(shebang !== null, 'the bin starts node with --no-memory-reducer');
    const [env, ...args] = shebang[1]!.split(' ');
    const version = spawnSync(env!, [...args, CLI, '--version'], { encoding: 'utf8' });
    assert.equal(version.status, 0, version.stderr);
    assert.match(version.stdout, /\d+\.\d+\.\d+/);
  });
  it('serves, then drains on SIGTERM and exits 0', async () => {
    const f = join(dir, 'ok.json');
    writeFileSync(join(dir, 'accounts.json'), '{"accounts":[]}');
    writeFileSync(f, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, internal: { enabled: false }, workers: 1, chains: minimal.chains }));
    const child = spawn(process.execPath, [CLI, '--config', f], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const deadline = Date.now() + 10_000;
    while (!out.includes('txgate listening') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (!out.includes('txgate listening')) child.kill('SIGKILL');
    assert.match(out, /txgate listening/);
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 0);
    // The batched log lines reach the pipe before the process leaves, the last one included.
    const msgs = out
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    assert.deepEqual(msgs.slice(-2), ['draining', 'stopped']);
  });
  it('the native uWebSockets.js binding is the one loaded (never the JS fall-back)', () => {
    const u = uws();
    assert.equal(typeof u.App, 'function');
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    assert.ok(
      loaded.some((k) => /uWebSockets\.js\/binaries\/uws_[a-z0-9_]+\.node$/.test(k)),
      'the .node binary is loaded',
    );
    assert.ok(!loaded.some((k) => /uWebSockets\.js\/(dist|src)\//.test(k)), 'the package entry point (with its JS fall-back) is not');
  });
});
