import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { resultsJson } from '../common/results-schema.js';
import { startTxgate } from '../common/txgate.js';
import { startBench } from '../common/bench-run.js';

const run = startBench(
  'bench:pre-auth-memory',
  "What idle connections that have sent a head and most of a body, never a key, hold of txgate's memory (RSS by phase).",
  {
    connections: { kind: 'int', quick: 8000, help: 'connections opened, each with a 64-KiB body declared and 60 KiB sent' },
    'port-base': { kind: 'int', min: 1024, quick: 18231, help: "txgate's loopback port" },
  },
);
const OUT = run.outDir;
mkdirSync(OUT, { recursive: true });
const N = run.opt.connections;
const PORT = run.opt['port-base'];
const DECLARED = 64 * 1024;
const SENT = 60 * 1024;
const KEY = 'txg_mem_' + randomBytes(24).toString('base64url');
const started = await startTxgate({
  config: {
    listen: { host: '127.0.0.1', port: PORT },
    internal: { enabled: false },
    workers: 1,
    log: { level: 'warn' },
    chains: [{ chainId: 4663, hosts: ['127.0.0.1', 'localhost'], sequencers: ['http://127.0.0.1:9'] }],
  },
  accounts: {
    accounts: [
      {
        id: 'mem',
        keySha256: [keySha256(KEY)],
        grants: [{ chainId: 4663, rateLimit: { perSecond: 1e6, burst: 1e6 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: '0' }],
      },
    ],
  },
  log: 'ignore',
  stderr: 'ignore',
  // Its sequencer is nobody (port 9): it is not ready, but it listens and answers eth_chainId.
  ready: 'tcp',
});
const gate = started.proc;
const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${gate.pid}/status`, 'utf8'))![1]) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const chainId = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`http://127.0.0.1:${PORT}/`, { method: 'POST', body: chainId, headers: { 'content-type': 'application/json' } })).status === 200) break;
  } catch {
    /* starting */
  }
  if (i > 300) throw new Error('txgate did not start');
  await sleep(50);
}
// Warm: a few hundred requests, so the baseline is a serving process.
for (let i = 0; i < 300; i++) await fetch(`http://127.0.0.1:${PORT}/`, { method: 'POST', body: chainId, headers: { 'content-type': 'application/json' } });
await sleep(500);

interface Phase {
  readonly phase: string;
  readonly rssBeforeMiB: number;
  readonly rssPeakMiB: number;
  readonly rssAfterMiB: number;
  /** Connections by what they saw before the phase ended: an answer's status, or `held` (nothing yet). */
  readonly answers: Record<string, number>;
}

async function phase(name: string, withKey: boolean): Promise<Phase> {
  const before = rssMiB();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB())), 50);
  const head = `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${withKey ? `X-Api-Key: ${KEY}\r\n` : ''}Content-Length: ${DECLARED}\r\n\r\n`;
  const payload = Buffer.concat([Buffer.from(head), Buffer.alloc(SENT, 0x61)]);
  const sockets: Socket[] = [];
  const seen: string[] = new Array(N).fill('held');
  for (let i = 0; i < N; i += 250) {
    await Promise.all(
      Array.from({ length: Math.min(250, N - i) }, (_, j) => {
        const k = i + j;
        return new Promise<void>((resolve) => {
          const s = connect(PORT, '127.0.0.1', () => {
            s.write(payload);
            resolve();
          });
          s.once('data', (d) => (seen[k] = /^HTTP\/1\.1 (\d{3})/.exec(d.toString('latin1'))?.[1] ?? 'other'));
          s.on('close', () => {
            if (seen[k] === 'held') seen[k] = 'closed unanswered';
          });
          s.on('error', () => resolve());
          sockets.push(s);
        });
      }),
    );
  }
  await sleep(3000); // every connection has sent what it will; held ones stay open (the idle timer is ~10 s)
  clearInterval(sampler);
  peak = Math.max(peak, rssMiB());
  const answers: Record<string, number> = {};
  for (const s of seen) answers[s] = (answers[s] ?? 0) + 1;
  for (const s of sockets) s.destroy();
  await sleep(3000);
  return { phase: name, rssBeforeMiB: round(before), rssPeakMiB: round(peak), rssAfterMiB: round(rssMiB()), answers };
}

const round = (n: number) => Math.round(n * 10) / 10;
const phases = [await phase(`${N} connections, ${SENT / 1024} KiB of a declared ${DECLARED / 1024} KiB, no key`, false)];
phases.push(await phase(`${N} connections, ${SENT / 1024} KiB of a declared ${DECLARED / 1024} KiB, a valid key`, true));
await started.stop();

const lines = [
  '| phase | RSS before (MiB) | peak while open | after close | peak / before | answers |',
  '|---|---|---|---|---|---|',
  ...phases.map(
    (p) =>
      `| ${p.phase} | ${p.rssBeforeMiB} | ${p.rssPeakMiB} | ${p.rssAfterMiB} | ${(p.rssPeakMiB / p.rssBeforeMiB).toFixed(2)}x | ${Object.entries(p.answers)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')} |`,
  ),
];
writeFileSync(join(OUT, 'pre-auth-memory.json'), resultsJson('pre-auth-memory', { connections: N, declared: DECLARED, sent: SENT, phases }));
writeFileSync(join(OUT, 'pre-auth-memory.md'), lines.join('\n') + '\n');
process.stdout.write(lines.join('\n') + '\n');
