/**
 * Every command `npm start` prints and every fenced shell block of the README and docs/ runs as
 * written. `npm start` (the real scripts/dev.js, on free ports) is started twice, with all of its
 * flags: once in plain HTTP (--sync --websocket --track --conditional) and once over TLS (the same and --tls);
 * its banner's commands are those of each flag alone, for the same TLS (test/unit/dev-banner.test.ts),
 * so these two starts print every command any flag or pair of flags prints. Each `try` command
 * is run as printed, in a shell. The docs' blocks run beside the plain start (its flags change
 * nothing they use), with the ports they name (8080, 8545, 9464) moved to this run's; a block that needs more than the development
 * gate (PostgreSQL, root, a chain with the auction contract, a project of your own) is marked
 * `<!-- needs: … -->` on the line before its fence and skipped here by name. Commands run in a
 * folder inside the checkout (where npm and npx find it), removed afterwards: a file a command
 * writes (an accounts file, a key) lands there.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { DEV_API_KEY } from '../../src/dev/dev-setup.js';
import { portFree } from '../../src/dev/preflight.js';
import { capturedLogs, eventually, issuedKeys } from '../support/harness.js';
import { freePort } from '../../src/base/free-port.js';
import { keysNeverLogged } from '../support/gate-fixture.js';
import { tempDir } from '../support/temp-dir.js';
import { shellBlocks, shellPages } from '../../scripts/doc-blocks.js';
import { devArgs } from '../support/dev-args.js';

keysNeverLogged({ except: [DEV_API_KEY] });

const root = join(import.meta.dirname, '..', '..', '..');
const walk = mkdtempSync(join(root, '.walk-'));
after(() => rmSync(walk, { recursive: true, force: true }));
const env = { ...process.env };
for (const v of ['TXGATE_ACCOUNTS', 'TXGATE_ACCOUNTS_DB', 'TXGATE_URL', 'TXGATE_API_KEY', 'CHAIN_RPC_URL', 'NODE_EXTRA_CA_CERTS']) delete env[v];

const BLOCKS = shellPages().flatMap((p) => shellBlocks(p));

async function sh(script: string, timeout = 90_000): Promise<{ code: number; out: string }> {
  const file = join(tempDir('txgate-walk-'), 'run.sh');
  writeFileSync(file, script + '\n');
  try {
    const r = await promisify(execFile)('bash', ['-e', file], { cwd: walk, env, encoding: 'utf8', timeout });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : 1, out: (x.stdout ?? '') + (x.stderr ?? '') };
  }
}

interface Dev {
  readonly proc: ChildProcess;
  readonly out: () => string;
  readonly port: number;
  readonly anvil: number;
  readonly internal: number;
}

async function startDev(flags: string[]): Promise<Dev> {
  const dir = tempDir('txgate-walk-dev-');
  const [port, anvil, internal, sequencer] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const seqPort = flags.includes('--conditional') ? ['--sequencer-port', String(sequencer)] : [];
  const proc = spawn(process.execPath, devArgs(dir, { port, anvil, internal }, '--json', ...seqPort, ...flags), {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    capturedLogs.push(d.toString());
  });
  // Both streams are what the file's key check reads (test/support/gate-fixture.ts): a key on stderr is a leak too.
  proc.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
    capturedLogs.push(d.toString());
  });
  await eventually(() => out.includes('is up') || proc.exitCode !== null, 60_000);
  assert.ok(out.includes('is up'), out);
  return { proc, out: () => out, port, anvil, internal };
}

async function stopDev(d: Dev): Promise<void> {
  d.proc.kill('SIGTERM');
  const code = await new Promise<number | null>((r) => (d.proc.exitCode !== null ? r(d.proc.exitCode) : d.proc.once('exit', r)));
  assert.equal(code, 0, `npm start stopped cleanly:\n${d.out().slice(-2000)}`);
  await eventually(async () => (await portFree('127.0.0.1', d.anvil)) && (await portFree('127.0.0.1', d.port)), 10_000);
}

/** The commands the banner prints (`try: …`, and the demo's `try` line), as printed. */
const printed = (out: string) => [...out.matchAll(/^ +try:? +(.+?)(?: {3,}\(.*\))? *$/gm)].map((m) => m[1]!);

async function runPrinted(d: Dev, expect: { demos: number; curls: number }): Promise<void> {
  const commands = printed(d.out());
  assert.equal(commands.filter((c) => c.includes('npm run demo')).length, expect.demos, commands.join('\n'));
  assert.equal(commands.filter((c) => c.startsWith('curl ')).length, expect.curls, commands.join('\n'));
  for (const c of commands) {
    const r = await sh(c);
    assert.equal(r.code, 0, `${c}\n${r.out}`);
    // --unmet: a condition that does not hold, refused by the development sequencer as op-geth refuses it.
    if (c.includes('--unmet')) assert.match(r.out, /refused as expected \(eth_sendRawTransactionConditional\): -32003 failed state check/, `${c}\n${r.out}`);
    else if (c.includes('npm run demo')) assert.match(r.out, /^status 0x1$/m, `${c}\n${r.out}`);
    if (c.includes('--conditional') && !c.includes('--unmet'))
      assert.match(r.out, /accepted by the sequencer \(eth_sendRawTransactionConditional\)/, `${c}\n${r.out}`);
    if (c.includes('--track')) assert.match(r.out, /the edge's status: (pending|included)/, `${c}\n${r.out}`);
  }
}

/**
 * The two starts, begun together (each takes seconds: anvil, the certificate): the plain one
 * (all flags but --tls), shared by its banner's commands and the docs' blocks, and the TLS one.
 */
let plainStart: Promise<Dev> | null = null;
let tlsStart: Promise<Dev> | null = null;
const begin = () => {
  plainStart ??= startDev(['--sync', '--websocket', '--track', '--conditional']);
  tlsStart ??= startDev(['--tls', '--sync', '--websocket', '--track', '--conditional']);
  // Awaited by the tests; a failed start fails them, never the process.
  plainStart.catch(() => {});
  tlsStart.catch(() => {});
};
const plainDev = () => (begin(), plainStart!);
after(async () => {
  for (const p of [plainStart, tlsStart]) {
    const d = await p?.catch(() => null);
    if (d != null && d.proc.exitCode === null) await stopDev(d);
  }
});

describe('every command npm start prints runs as printed', () => {
  it('npm start -- --sync --websocket --track --conditional: the demo, the sync send, tracking, the WebSocket transport, a conditional send included and one refused -32003 (on anvil, through the development sequencer)', async () => {
    await runPrinted(await plainDev(), { demos: 6, curls: 0 });
  });
  it('npm start -- --tls --sync --websocket --track --conditional: every line over TLS, each with the development CA (wss:// included), and curl', async () => {
    begin();
    await runPrinted(await tlsStart!, { demos: 6, curls: 1 });
  });
});

describe('every fenced shell block of the README and docs/ runs as written beside npm start', () => {
  for (const b of BLOCKS) {
    if (b.needs !== null) {
      it(b.where, { skip: `needs ${b.needs}` }, () => {});
      continue;
    }
    it(b.where, async () => {
      const dev = await plainDev();
      const script = b.text.replaceAll('8080', String(dev.port)).replaceAll('8545', String(dev.anvil)).replaceAll('9464', String(dev.internal));
      const r = await sh(script);
      assert.equal(r.code, 0, `${b.where}:\n${script}\n--- output:\n${r.out}`);
      for (const k of r.out.matchAll(/(txg_[A-Za-z0-9_-]{43})/g)) issuedKeys.push(k[1]!);
    });
  }
  it('the blocks walked include the first transaction, the onboarding commands and the express lane key', () => {
    const walked = BLOCKS.filter((b) => b.needs === null).map((b) => b.text);
    assert.ok(walked.some((t) => t.includes('eth_sendRawTransaction')));
    assert.ok(walked.some((t) => t.includes('npm run accounts -- create')));
    assert.ok(walked.some((t) => t.includes('cast wallet new')));
  });
});
