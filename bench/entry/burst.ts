/**
 * Burst outcomes: N distinct valid submissions at once against a slow sequencer, with txgate
 * running as the CLI runs it (its own process, default forward settings unless given). Every
 * answer is classified against what the sequencer actually received:
 * - 200 with the hash (and the sequencer saw it),
 * - 503 (not forwarded: the sequencer must not have seen it),
 * - 502 (uncertain), split into bytes the sequencer saw and bytes it never saw,
 * - anything else.
 * A definite edge has zero 502 for bytes never sent, and zero 200 the sequencer did not see.
 *
 * Usage: npm run bench:burst -- [--n 300] [--delay 500] [--workers 1] [--connections N] [--queue-ms N] (--help)
 */
import { request, Agent } from 'node:http';
import { keySha256 } from '../../src/accounts/keys.js';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { signedPool } from '../common/fixtures.js';
import { startBench } from '../common/bench-run.js';
import { startTxgate } from '../common/txgate.js';
import { hashOf, serveStub } from '../servers/stub-sequencer.js';

const run = startBench(
  'bench:burst',
  'A burst of distinct submissions at once against a slow sequencer; every answer classified against what the sequencer saw.',
  {
    n: { kind: 'int', quick: 300, help: 'submissions in the burst' },
    delay: { kind: 'int', min: 0, quick: 500, help: "the sequencer's answer delay, ms" },
    workers: { kind: 'int', quick: 1, help: "txgate's worker threads" },
    connections: { kind: 'int', min: 0, quick: 0, help: "forward.connections (0: txgate's default)" },
    'queue-ms': { kind: 'int', min: 0, quick: 0, help: "forward.queueMs (0: txgate's default)" },
  },
);
const N = run.opt.n;
const DELAY = run.opt.delay;
const WORKERS = run.opt.workers;
const KEY = 'txg_burst_key_0000000000000000000000000000000000';

// The sequencer: answers every submission with its hash after DELAY ms, and records what it saw.
const seen = new Set<string>();
const stub = await serveStub({ port: 0, delayMs: DELAY, onSubmit: (hash) => seen.add(hash) });

const forward: Record<string, number> = {};
if (run.opt.connections > 0) forward.connections = run.opt.connections;
if (run.opt['queue-ms'] > 0) forward.queueMs = run.opt['queue-ms'];
const gate = await startTxgate({
  config: {
    listen: { host: '127.0.0.1', port: 0 },
    internal: { enabled: false },
    workers: WORKERS,
    log: { level: 'info' },
    chains: [{ chainId: 4663, hosts: ['localhost'], sequencers: [`http://127.0.0.1:${stub.port}`], forward }],
  },
  accounts: {
    accounts: [
      {
        id: 'burst',
        keySha256: [keySha256(KEY)],
        grants: [{ chainId: 4663, rateLimit: { perSecond: 1e6, burst: 1e6 }, txTypes: [2], tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: '1000000000000' }],
      },
    ],
  },
  log: 'pipe',
  stderr: 'inherit',
  parent: run.tmp,
  children: run.children,
});
const port = gate.port;
const txs = await signedPool(N);
process.stderr.write(`txgate (pid ${gate.proc.pid}) on port ${port}; sending ${N} submissions at once\n`);
const agent = new Agent({ keepAlive: true, maxSockets: N });
const post = (raw: string) =>
  new Promise<{ status: number; body: string }>((resolve) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] });
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        agent,
        headers: { host: 'localhost', 'content-type': 'application/json', 'x-api-key': KEY, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', (e) => resolve({ status: 0, body: String(e) }));
    req.end(body);
  });

// Warm the connections first (a burst of submissions, not of TCP handshakes).
await Promise.all(Array.from({ length: Math.min(N, 512) }, () => post('0x00')));
seen.clear();
const t0 = performance.now();
const answers = await Promise.all(txs.map(post));
const ms = performance.now() - t0;
await new Promise((r) => setTimeout(r, DELAY + 200)); // late writes would show up here

const count = { ok: 0, okUnseen: 0, s503: 0, s503Seen: 0, s502Seen: 0, s502Unseen: 0, other: 0 };
const reasons = new Map<string, number>();
answers.forEach((a, i) => {
  const hash = hashOf(txs[i]!);
  const was = seen.has(hash);
  let reason = String(a.status);
  try {
    reason += ' ' + ((JSON.parse(a.body) as { error?: { data?: { reason?: string } } }).error?.data?.reason ?? 'ok');
  } catch {
    /* not JSON */
  }
  reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  if (a.status === 200 && a.body.includes(hash)) was ? count.ok++ : count.okUnseen++;
  else if (a.status === 503) was ? count.s503Seen++ : count.s503++;
  else if (a.status === 502) was ? count.s502Seen++ : count.s502Unseen++;
  else count.other++;
});
const lines = [
  `burst of ${N} submissions, sequencer ${DELAY} ms, workers ${WORKERS}, forward ${JSON.stringify(forward)}: all answered in ${ms.toFixed(0)} ms`,
  `  by status and reason: ${[...reasons].map(([r, n]) => `${n} × ${r}`).join(', ')}`,
  `  200 with the hash, sequencer saw it:  ${count.ok}`,
  `  200 the sequencer never saw:          ${count.okUnseen}`,
  `  503 not forwarded (sequencer unseen): ${count.s503}`,
  `  503 although the sequencer saw it:    ${count.s503Seen}`,
  `  502 uncertain, bytes were sent:       ${count.s502Seen}`,
  `  502 uncertain, bytes never sent:      ${count.s502Unseen}`,
  `  other:                                ${count.other}`,
];
console.log(lines.join('\n'));
run.write('burst.md', lines.join('\n') + '\n');
const path = run.write(
  'burst.json',
  JSON.stringify(
    {
      node: process.version,
      date: new Date().toISOString(),
      n: N,
      delayMs: DELAY,
      workers: WORKERS,
      forward,
      ms: Math.round(ms),
      count,
      reasons: Object.fromEntries(reasons),
    },
    null,
    2,
  ) + '\n',
);
console.log(`written to ${path} and burst.md`);
await gate.stop();
agent.destroy();
stub.close();
process.exit(0);
