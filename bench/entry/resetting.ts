/**
 * bench:resetting — what a sequencer that takes only a few connections and resets the rest
 * does to txgate's answers: N concurrent submissions (each on a connection of its own) through
 * a txgate whose sequencer accepts at most `--capacity` connections at once and resets every
 * other one as soon as it is accepted (before reading a byte). Counts the answers by kind and
 * checks them against what the sequencer really read: a 200 must be a transaction it read, a
 * 503 ("not sent") must be one it never read; a 502 is "could not tell".
 *
 * `npm run bench:resetting -- --help` lists the options; `--base REF` runs another build's txgate
 * (an older commit's) against the same sequencer and load, for a before/after in one run.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer, request } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { startBench } from '../common/bench-run.js';
import { baseBuildOrExit } from '../common/base-build.js';
import { randomBytes } from 'node:crypto';
import { sign1559 } from '../../src/dev/sign.js';
import { initCrypto, keccak256 } from '../../src/base/native.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { startTxgate } from '../common/txgate.js';
import { REPO } from '../common/paths.js';

const run = startBench(
  'bench:resetting',
  "A sequencer that takes a few connections and resets the rest: txgate's answers counted against what the sequencer really read (--base REF: another build beside this one).",
  {
    requests: { kind: 'int', quick: 200, full: 1000, help: 'concurrent submissions per round' },
    capacity: { kind: 'int', quick: 8, help: 'connections the sequencer serves at once; the rest are reset' },
    rounds: { kind: 'int', quick: 3, full: 5, help: 'rounds per build' },
    'reset-after': {
      kind: 'list',
      choices: ['data', 'accept', 'close'],
      quick: ['data'],
      help: "when the sequencer resets a connection past its capacity: data (once the request's bytes arrived, unread), accept (at once), close (a FIN, as a server at its connection limit does)",
    },
    base: { kind: 'text', arg: 'REF', help: "another build (a commit, branch or tag, built apart as bench:profile builds its base), run before this tree's" },
  },
);
const opt = run.opt;
const REQUESTS = opt.requests;
const CAPACITY = opt.capacity;
const ROUNDS = opt.rounds;
if (opt['reset-after']!.length !== 1) {
  process.stderr.write('bench:resetting: --reset-after takes one of data, accept, close\n');
  process.exit(2);
}
const RESET_AFTER = opt['reset-after']![0]!;
const dists = [...(opt.base === undefined ? [] : [baseBuildOrExit('bench:resetting', opt.base).root]), REPO];

await initCrypto();
const dir = run.tmp;
const children = run.children;
process.on('SIGINT', () => process.exit(130));

const hashOf = (raw: string) => '0x' + Buffer.from(keccak256(Buffer.from(raw.slice(2), 'hex'))).toString('hex');

/** The resetting sequencer: what it read (hashes), and how many connections it reset. */
const read = new Set<string>();
let resets = 0;
let active = 0;
const seq = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const m = JSON.parse(body) as { id: number; method: string; params: string[] };
    const reply = (result: unknown) => res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    if (m.method === 'eth_chainId') return reply('0x1237');
    if (m.method === 'eth_getTransactionByHash') return reply(read.has(m.params[0]!) ? { hash: m.params[0] } : null);
    const h = hashOf(m.params[0]!);
    read.add(h);
    reply(h);
  });
});
seq.keepAliveTimeout = 60_000;
seq.on('connection', (s: Socket) => {
  if (active >= CAPACITY) {
    resets++;
    // `accept`: reset at once (the client may not have written yet); `data`: once the request's
    // bytes have arrived, unread by the server (the client wrote them: the harder case).
    if (RESET_AFTER === 'accept') s.resetAndDestroy();
    else if (RESET_AFTER === 'close') {
      s.pause();
      s.end();
      setTimeout(() => s.destroyed || s.destroy(), 50);
    } else {
      s.pause();
      s.once('readable', () => s.resetAndDestroy());
      setTimeout(() => s.destroyed || s.resetAndDestroy(), 50);
    }
    return;
  }
  active++;
  s.on('close', () => active--);
});
await new Promise<void>((r) => seq.listen(0, '127.0.0.1', r));
const seqUrl = `http://127.0.0.1:${(seq.address() as { port: number }).port}`;

const KEY = randomBytes(24).toString('hex');
const accounts = {
  accounts: [
    {
      id: 'mm',
      keySha256: [keySha256(KEY)],
      allowUntipped: true,
      grants: [
        {
          chainId: 4663,
          rateLimit: { perSecond: 1e6, burst: 1e6 },
          txTypes: [2],
          tipAddresses: ['0x' + '33'.repeat(20)],
          minTipWei: '1',
          feePatterns: [{ kind: 'transfer' }],
        },
      ],
    },
  ],
};

let port = 19_400 + Math.floor(Math.random() * 500);
async function startGate(dist: string): Promise<{ child: ChildProcess; port: number; stop: () => Promise<void> }> {
  const p = port++;
  const g = await startTxgate({
    config: {
      listen: { host: '127.0.0.1', port: p },
      internal: { host: '127.0.0.1', port: p + 1000 },
      workers: 1,
      log: { level: 'fatal' },
      metrics: { enabled: false },
      chains: [{ chainId: 4663, hosts: ['127.0.0.1'], sequencers: [seqUrl], forward: { connections: 64, maxInFlight: 4096, timeoutMs: 2000 } }],
    },
    accounts,
    cli: join(dist, 'dist/src/cli.js'),
    log: process.env.BENCH_CHILD_LOG ? 'pipe' : 'ignore',
    stderr: 'inherit',
    parent: dir,
    children,
    readyMs: 20_000,
  }).catch((e: Error) => {
    throw new Error(`txgate from ${dist} did not become ready (${e.message})`);
  });
  if (process.env.BENCH_CHILD_LOG) g.proc.stdout?.pipe(process.stdout);
  return { child: g.proc, port: p, stop: () => g.stop() };
}

let nonce = 0;
const PK = '0x' + '11'.repeat(32);
function submit(p: number, raw: string): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [raw] });
  return new Promise((r) => {
    const q = request(
      {
        host: '127.0.0.1',
        port: p,
        method: 'POST',
        path: '/',
        agent: false,
        headers: { 'content-type': 'application/json', 'x-api-key': KEY, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let t = '';
        res.on('data', (c) => (t += c));
        res.on('end', () => r({ status: res.statusCode ?? 0, body: t }));
      },
    );
    q.on('error', (e) => r({ status: 0, body: e.message }));
    q.end(body);
  });
}

console.log(
  `bench:resetting: ${REQUESTS} concurrent submissions, a sequencer serving ${CAPACITY} connections at once and resetting the rest (after: ${RESET_AFTER}), ${ROUNDS} rounds per build`,
);
for (const dist of dists) {
  const g = await startGate(dist);
  const totals = { ok: 0, uncertain: 0, uncertainUnread: 0, notSent: 0, other: 0, lies: 0, notSentButRead: 0, read: 0, resets: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    // A fresh txgate connection pool each round would need a restart; the rounds reuse it (its kept-alive connections count against the capacity too).
    const raws = Array.from({ length: REQUESTS }, () =>
      sign1559(
        { chainId: 4663, nonce: nonce++, maxPriorityFeePerGas: 1n, maxFeePerGas: 2_000_000_000n, gas: 21_000n, to: '0x' + '33'.repeat(20), value: 1n },
        PK,
      ),
    );
    const r0 = resets;
    const answers = await Promise.all(raws.map((raw) => submit(g.port, raw)));
    totals.resets += resets - r0;
    answers.forEach((a, i) => {
      const h = hashOf(raws[i]!);
      if (read.has(h)) totals.read++;
      if (a.status === 200 && a.body.includes('"result"')) {
        totals.ok++;
        if (!read.has(h)) totals.lies++;
      } else if (a.status === 502) {
        totals.uncertain++;
        if (!read.has(h)) totals.uncertainUnread++;
      } else if (a.status === 503) {
        totals.notSent++;
        if (read.has(h)) totals.notSentButRead++;
      } else {
        totals.other++;
        if (totals.other === 1) console.log(`  e.g. ${a.status} ${a.body.slice(0, 200)}`);
      }
    });
  }
  await g.stop();
  const n = REQUESTS * ROUNDS;
  const pct = (x: number) => `${((100 * x) / n).toFixed(1)}%`;
  console.log(
    `${dist}: 200 ${totals.ok} (${pct(totals.ok)}), 502 ${totals.uncertain} (${pct(totals.uncertain)}), 503 ${totals.notSent} (${pct(totals.notSent)}), other ${totals.other}; ` +
      `read by the sequencer ${totals.read}, connections reset ${totals.resets}; 200 not read ${totals.lies}, 503 read ${totals.notSentButRead}, ` +
      `502 never read ${totals.uncertainUnread} (${pct(totals.uncertainUnread)})`,
  );
}
seq.close();
process.exit(0);
