/**
 * `npm run bench:sync -- --flashblocks`: the sync send answered at the preconfirmation against
 * the same send answered at the sealed block (the third param "sealed"), and the plain send's
 * acceptance beside them, in the same trials (docs/flashblocks.md). The chain is the development
 * builder over anvil (src/dev/flashblocks.ts: a slice every 200 ms, a block sealed every 2 s),
 * txgate one process with one worker thread, the sync send in `receipt` mode with the chain
 * RPC's head subscription and the flashblocks stream. Each trial sends the three flows' transactions at the same
 * instant, at a random phase of the block; three rounds of `trials`, each flow's median in each
 * round, and the median of the three.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { privateKeyToAddress } from 'viem/accounts';
import { keySha256 } from '../../src/accounts/keys.js';
import { initCrypto } from '../../src/base/native.js';
import { ANVIL_KEYS, ANVIL_TIP_ADDRESS, startAnvil } from '../../src/dev/anvil.js';
import { FlashblocksPublisher } from '../../src/dev/flashblocks.js';
import { tippedTransfer } from '../common/transfers.js';
import { median, round } from '../common/figures.js';
import { resultsJson } from '../common/results-schema.js';
import { startTxgate } from '../common/txgate.js';

const CHAIN = 4663;
const ROUNDS = 3;
const MIN_TIP = 1_000_000_000_000n;

export interface FlashblocksBenchRun {
  readonly tmp: string;
  readonly children: import('node:child_process').ChildProcess[];
  write(file: string, text: string): string;
}

export async function flashblocksSync(run: FlashblocksBenchRun, trials: number): Promise<void> {
  await initCrypto();
  const anvil = await startAnvil({ port: 18430, chainId: CHAIN, extraArgs: ['--no-mining'] });
  run.children.push(anvil.process);
  const builder = await new FlashblocksPublisher({ anvil: anvil.url }).start();
  const KEY = 'txg_fb_bench_' + randomBytes(24).toString('base64url');
  const gate = await startTxgate({
    config: {
      listen: { host: '127.0.0.1', port: 18431 },
      internal: { enabled: false },
      workers: 1,
      log: { level: 'warn' },
      chains: [
        {
          chainId: CHAIN,
          hosts: ['127.0.0.1', 'localhost'],
          sequencers: [builder.sequencerUrl],
          rpc: anvil.url,
          rpcWs: anvil.url.replace(/^http/, 'ws'),
          sync: { enabled: true, mode: 'receipt', maxWaitMs: 10_000 },
          flashblocks: { enabled: true, url: builder.url },
        },
      ],
    },
    accounts: {
      accounts: [
        {
          id: 'bench',
          keySha256: [keySha256(KEY)],
          grants: [{ chainId: CHAIN, rateLimit: { perSecond: 1e6, burst: 1e6 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: MIN_TIP.toString(), sync: true }],
        },
      ],
    },
    stderr: 'inherit',
    parent: run.tmp,
    children: run.children,
  });
  let id = 0;
  const call = async (method: string, params: unknown[]) => {
    const r = await fetch(gate.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
    });
    const body = (await r.json()) as { result?: { blockHash?: string } | string };
    if (r.status !== 200) throw new Error(`${method}: ${r.status} ${JSON.stringify(body)}`);
    return body.result;
  };
  const ZERO = '0x' + '0'.repeat(64);
  const flows = [
    { name: 'plain send: the acceptance (the 200)', run: (raw: string) => call('eth_sendRawTransaction', [raw]) },
    {
      name: 'sync send, answered at the preconfirmation',
      run: async (raw: string) => {
        const r = (await call('eth_sendRawTransactionSync', [raw])) as { blockHash?: string };
        if (r.blockHash !== ZERO) throw new Error(`not answered at the preconfirmation: ${JSON.stringify(r)}`);
      },
    },
    {
      name: 'sync send, "sealed": answered at the sealed block',
      run: async (raw: string) => {
        const r = (await call('eth_sendRawTransactionSync', [raw, null, 'sealed'])) as { blockHash?: string };
        if (r.blockHash === ZERO || r.blockHash === undefined) throw new Error(`not a sealed receipt: ${JSON.stringify(r)}`);
      },
    },
  ];
  const nonces = await Promise.all(
    flows.map(async (_, i) => {
      const r = await fetch(anvil.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_getTransactionCount',
          params: [privateKeyToAddress(ANVIL_KEYS[i] as `0x${string}`), 'pending'],
        }),
      });
      return Number(((await r.json()) as { result: string }).result);
    }),
  );
  const signed = (i: number) => tippedTransfer(ANVIL_KEYS[i]!, nonces[i]!++, { chainId: CHAIN, maxFeePerGas: 20_000_000_000n, value: MIN_TIP });
  // Warm-up: the stream read, connections open, the code compiled.
  await new Promise((r) => setTimeout(r, 1500));
  await Promise.all(flows.map((f, i) => f.run(signed(i))));

  const perRound: number[][] = flows.map(() => []);
  const all: number[][] = flows.map(() => []);
  process.stderr.write(`${ROUNDS} rounds of ${trials} trials of ${flows.length} flows, a slice every 200 ms, a block every 2 s\n`);
  for (let k = 0; k < ROUNDS; k++) {
    const times: number[][] = flows.map(() => []);
    for (let t = 0; t < trials; t++) {
      await new Promise((r) => setTimeout(r, Math.random() * 2000));
      const raws = flows.map((_, i) => signed(i));
      await Promise.all(
        flows.map(async (f, i) => {
          const t0 = performance.now();
          await f.run(raws[i]!);
          times[i]!.push(performance.now() - t0);
        }),
      );
    }
    times.forEach((xs, i) => {
      perRound[i]!.push(median(xs));
      all[i]!.push(...xs);
    });
    process.stderr.write(`  round ${k + 1}/${ROUNDS}: ${perRound.map((r) => `${round(r[k]!, 1)} ms`).join(', ')}\n`);
  }

  const lines: string[] = [];
  const say = (s: string) => {
    lines.push(s);
    process.stdout.write(s + '\n');
  };
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
  say(
    `\n## Submission to answer on a flashblocks chain (the development builder over anvil; ${ROUNDS} rounds of ${trials} trials, the three sent at the same instant)\n`,
  );
  say('| flow | p50 ms, each round | **p50 ms, median of the rounds** | p90 ms, all rounds | minus the acceptance, median of the rounds |');
  say('|---|---|---|---|---|');
  const accept = median(perRound[0]!);
  const rows = flows.map((f, i) => {
    const p50 = median(perRound[i]!);
    const row = { flow: f.name, medianMs: round(p50, 1), p90Ms: round(pct(all[i]!, 90), 1), minusSyncMs: round(p50 - accept, 1), requestsPerTx: 1 };
    say(`| ${f.name} | ${perRound[i]!.map((x) => round(x, 1)).join(', ')} | **${row.medianMs}** | ${row.p90Ms} | ${row.minusSyncMs} |`);
    return row;
  });
  const mdPath = run.write('sync-flashblocks.md', lines.join('\n') + '\n');
  run.write('sync-flashblocks.json', resultsJson('sync', { node: process.version, blockTimeS: 2, trials, date: new Date().toISOString(), rows, perRound }));
  say(`\nwritten to ${mdPath} and sync-flashblocks.json`);
  await builder.stop();
  await anvil.stop();
  process.exit(0);
}
