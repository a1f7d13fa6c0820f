import { randomBytes } from 'node:crypto';
import { privateKeyToAddress } from 'viem/accounts';
import { ANVIL_KEYS, ANVIL_TIP_ADDRESS, startAnvil } from '../../src/dev/anvil.js';
import { tippedTransfer } from '../common/transfers.js';
import { initCrypto } from '../../src/base/native.js';
import { keySha256 } from '../../src/accounts/keys.js';
import { differsFrom } from '../common/figures.js';
import { startBench } from '../common/bench-run.js';
import { median, round } from '../common/figures.js';
import { RESULTS_DIR } from '../common/paths.js';
import { startTxgate } from '../common/txgate.js';
import { resultsJson } from '../common/results-schema.js';
import { flashblocksSync } from '../load/flashblocks-sync.js';

const run = startBench('bench:sync', 'Submission to receipt on anvil: the sync send against send-then-poll, every flow in the same trials.', {
  trials: { kind: 'int', quick: 15, full: 40, help: 'transactions per flow' },
  poll: { kind: 'numbers', quick: [100, 250, 1000], help: 'send-then-poll intervals, ms' },
  'block-time': { kind: 'number', min: 0.05, quick: 1, help: "anvil's seconds between blocks" },
  flashblocks: { kind: 'flag', help: 'instead: on a flashblocks chain, the preconfirmed answer against the sealed one (bench/load/flashblocks-sync.ts)' },
});
if (run.opt.flashblocks) await flashblocksSync(run, run.opt.trials);
const TRIALS = run.opt.trials;
const POLLS = run.opt.poll;
const BLOCK_S = run.opt['block-time'];
const dir = run.tmp;
const children = run.children;
await initCrypto();

const CHAIN = 4663;
const ANVIL_PORT = 18400;
const anvil = await startAnvil({ port: ANVIL_PORT, chainId: CHAIN, blockTime: BLOCK_S });
children.push(anvil.process);
const chainRpc = anvil.url;
const KEY = 'txg_sync_bench_' + randomBytes(24).toString('base64url');
const MIN_TIP = 1_000_000_000_000n;
const accounts = {
  accounts: [
    {
      id: 'bench',
      keySha256: [keySha256(KEY)],
      grants: [{ chainId: CHAIN, rateLimit: { perSecond: 1e6, burst: 1e6 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: MIN_TIP.toString(), sync: true }],
    },
  ],
};

/** A txgate in front of the anvil, with the sync send on in `sync`'s way. */
async function startGate(port: number, sync: Record<string, unknown>, chain: Record<string, unknown> = {}): Promise<string> {
  const gate = await startTxgate({
    config: {
      listen: { host: '127.0.0.1', port },
      internal: { enabled: false },
      workers: 1,
      log: { level: 'info' },
      chains: [
        {
          chainId: CHAIN,
          hosts: ['127.0.0.1', 'localhost'],
          sequencers: [chainRpc],
          ...chain,
          // anvil takes the sync method with the transaction alone, and waits for the block.
          sync: { enabled: true, maxWaitMs: 10_000, syncTimeoutFormat: 'omit', ...sync },
        },
      ],
    },
    accounts,
    stderr: 'inherit',
    parent: dir,
    children,
  });
  return gate.url;
}
const forward = await startGate(18410, { mode: 'forward' });
const heads = await startGate(18411, { mode: 'receipt' }, { rpc: chainRpc, rpcWs: chainRpc.replace(/^http/, 'ws') });
const polled = await startGate(18412, { mode: 'receipt', pollMs: 100 }, { rpc: chainRpc });

// --- one JSON-RPC call over keep-alive fetch ------------------------------------------------------
let id = 0;
async function call(
  url: string,
  method: string,
  params: unknown[],
  key?: string,
): Promise<{ status: number; body: { result?: unknown; error?: { data?: { reason?: string } } } }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key !== undefined ? { 'x-api-key': key } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
  });
  return { status: r.status, body: (await r.json()) as { result?: unknown; error?: { data?: { reason?: string } } } };
}

// --- the flows -------------------------------------------------------------------------------------
interface Flow {
  readonly name: string;
  /** Submits `raw`; resolves with the HTTP requests it took, once the receipt is in hand. */
  run(raw: string): Promise<number>;
}
const isReceipt = (v: unknown) => typeof v === 'object' && v !== null && typeof (v as { blockNumber?: unknown }).blockNumber === 'string';
const syncFlow = (name: string, url: string): Flow => ({
  name,
  async run(raw) {
    const r = await call(url, 'eth_sendRawTransactionSync', [raw], KEY);
    if (r.status !== 200 || !isReceipt(r.body.result)) throw new Error(`${name}: ${r.status} ${JSON.stringify(r.body)}`);
    return 1;
  },
});
const pollFlow = (ms: number): Flow => ({
  name: `send, then poll the chain RPC every ${ms} ms`,
  async run(raw) {
    const r = await call(forward, 'eth_sendRawTransaction', [raw], KEY);
    if (r.status !== 200 || typeof r.body.result !== 'string') throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
    for (let n = 2; ; n++) {
      if (isReceipt((await call(chainRpc, 'eth_getTransactionReceipt', [r.body.result])).body.result)) return n;
      await new Promise((res) => setTimeout(res, ms));
    }
  },
});
const flows: Flow[] = [
  syncFlow('sync send, forward mode', forward),
  syncFlow('sync send, receipt mode, chain RPC head subscription', heads),
  syncFlow('sync send, receipt mode, polling every 100 ms', polled),
  ...POLLS.map(pollFlow),
];
if (flows.length > ANVIL_KEYS.length) throw new Error(`at most ${ANVIL_KEYS.length} flows (one signer each)`);

// Each flow signs with its own anvil account, nonces counted here.
const nonces = await Promise.all(
  flows.map(async (_, i) =>
    Number((await call(chainRpc, 'eth_getTransactionCount', [privateKeyToAddress(ANVIL_KEYS[i] as `0x${string}`), 'pending'])).body.result),
  ),
);
const signed = (i: number) => tippedTransfer(ANVIL_KEYS[i]!, nonces[i]!++, { chainId: CHAIN, maxFeePerGas: 20_000_000_000n, value: MIN_TIP });

// Warm-up: one transaction per flow (connections, JIT, the subscription live).
await new Promise((r) => setTimeout(r, 1000));
await Promise.all(flows.map((f, i) => f.run(signed(i))));

const times: number[][] = flows.map(() => []);
const requests: number[][] = flows.map(() => []);
process.stderr.write(`${TRIALS} trials of ${flows.length} flows, anvil --block-time ${BLOCK_S}\n`);
for (let t = 0; t < TRIALS; t++) {
  await new Promise((r) => setTimeout(r, Math.random() * BLOCK_S * 1000));
  const raws = flows.map((_, i) => signed(i));
  await Promise.all(
    flows.map(async (f, i) => {
      const t0 = performance.now();
      const n = await f.run(raws[i]!);
      times[i]!.push(performance.now() - t0);
      requests[i]!.push(n);
    }),
  );
  if ((t + 1) % 10 === 0) process.stderr.write(`  ${t + 1}/${TRIALS}\n`);
}

// --- report ----------------------------------------------------------------------------------------
const lines: string[] = [];
const say = (s: string) => {
  lines.push(s);
  process.stdout.write(s + '\n');
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ref = times[0]!;
say(
  `\n## Submission to receipt against anvil --block-time ${BLOCK_S} (${TRIALS} trials; every flow's transaction sent at the same instant, at a random phase of the block)\n`,
);
say('| flow | median ms | mean ms | p90 ms | HTTP requests / tx | **minus the sync send (forward), same trial: median ms** | mean / sync send mean |');
say('|---|---|---|---|---|---|---|');
const rows = flows.map((f, i) => {
  const xs = times[i]!;
  const diff = median(xs.map((x, t) => x - ref[t]!));
  const row = {
    flow: f.name,
    medianMs: round(median(xs), 1),
    meanMs: round(mean(xs), 1),
    p90Ms: round(pct(xs, 90), 1),
    requestsPerTx: round(mean(requests[i]!), 2),
    minusSyncMs: round(diff, 1),
    meanRatio: round(mean(xs) / mean(ref), 2),
  };
  say(`| ${row.flow} | ${row.medianMs} | ${row.meanMs} | ${row.p90Ms} | ${row.requestsPerTx} | **${row.minusSyncMs}** | ${row.meanRatio}x |`);
  return row;
});
const out = `sync-${BLOCK_S}s`;
const differs = run.outDir === RESULTS_DIR ? '' : differsFrom(RESULTS_DIR, `${out}.json`, { trials: TRIALS, blockTimeS: BLOCK_S });
if (differs !== '') say(`\n${differs}`);
const mdPath = run.write(`${out}.md`, lines.join('\n') + '\n');
run.write(`${out}.json`, resultsJson('sync', { node: process.version, blockTimeS: BLOCK_S, trials: TRIALS, date: new Date().toISOString(), rows, times }));
say(`\nwritten to ${mdPath} and ${out}.json`);
await anvil.stop();
process.exit(0);
