/**
 * The client kit is a package of its own (packages/client, `txgate-client`): what `npm pack`
 * puts in it, and what it asks a client project to install. Nothing of the server.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const dir = join(process.cwd(), 'packages', 'client');
const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
  name: string;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const server = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { dependencies: Record<string, string> };

describe('txgate-client, the package', () => {
  it('depends on nothing of the server: undici, hash-wasm and ws, viem and ethers as optional peers', () => {
    assert.deepEqual(Object.keys(pkg.dependencies).sort(), ['hash-wasm', 'undici', 'ws']);
    for (const d of ['uWebSockets.js', 'secp256k1', 'pino', 'postgres', '@ethereumjs/tx', 'prom-client']) assert.equal(pkg.dependencies[d], undefined, d);
    assert.ok(Object.keys(server.dependencies).includes('uWebSockets.js'), 'the server keeps its own');
    assert.deepEqual(Object.keys(pkg.peerDependencies).sort(), ['ethers', 'viem']);
    assert.equal(pkg.peerDependenciesMeta.viem?.optional, true);
    assert.equal(pkg.peerDependenciesMeta.ethers?.optional, true);
  });
  it('npm pack holds its build and README only, a few tens of kB', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const [packed] = JSON.parse(out) as { name: string; size: number; unpackedSize: number; files: { path: string }[] }[];
    assert.equal(packed!.name, 'txgate-client');
    const files = packed!.files.map((f) => f.path).sort();
    for (const f of files) assert.match(f, /^(dist\/[a-z-]+\.(js|d\.ts)|README\.md|package\.json)$/, f);
    for (const entry of ['dist/index.js', 'dist/viem.js', 'dist/ethers.js', 'dist/index.d.ts']) assert.ok(files.includes(entry), entry);
    assert.ok(packed!.unpackedSize < 200_000, `unpacked ${packed!.unpackedSize} bytes`);
    // docs/clients.md says what the packed file weighs: within 15% of what npm pack writes now.
    const docs = readFileSync(join(process.cwd(), 'docs', 'clients.md'), 'utf8');
    const m = /writes txgate-client-[\d.]+\.tgz \((\d+) kB; (\d+) kB unpacked\)/.exec(docs);
    assert.ok(m !== null, 'docs/clients.md names the packed size');
    for (const [said, real] of [
      [Number(m[1]), packed!.size / 1000],
      [Number(m[2]), packed!.unpackedSize / 1000],
    ] as const)
      assert.ok(Math.abs(said - real) / real <= 0.15, `docs/clients.md says ${said} kB; npm pack: ${real.toFixed(1)} kB (update the figure)`);
  });
});
