/**
 * `npm run bench:track`: what tracking accepted transactions costs (docs/tracking.md), measured
 * in-process on the tracker's own code (src/track/):
 *
 * 1. Memory per tracked transaction: the heap after `--entries` acceptances told to a tracker
 *    (its table, entries and the watcher's queues, hashes fresh strings as a request makes
 *    them), less the heap before, per entry: just accepted (the signed bytes still held until the
 *    first lookup tells the sender), and after it (the sender known, the bytes let go). Medians
 *    of `--rounds`. With several worker threads the owner (worker 0) holds every other worker's
 *    acceptances as it reads them from that worker's ring (src/track/seam/): measured
 *    too ("handed over": hash, bytes and sender read into strings of their own; the tracker
 *    keeps one copy of each account, sequencer and rule), and with a 120-character sequencer
 *    label.
 * 2. Heap bytes one acceptance allocates (`--allocs`; bench/drivers/track-alloc.ts), on the
 *    owner and handed over: what a tracked submission adds to the young generation's work.
 * 3. The watcher's cost on the serving thread per block: `--pending` pending transactions tracked,
 *    blocks of `--txs` transactions (none of them tracked: the cost of watching) read from a chain
 *    RPC stand-in that answers the JSON text a node sends (parsed here, as undici's body would
 *    be), against an idle block (no transaction) in the same run: CPU time per block
 *    (process.cpuUsage, medians of rounds), and the ratio. The socket read of the answer is not
 *    in it (a few µs per 70 kB on loopback).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MessageChannel } from 'node:worker_threads';
import { parseConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/log.js';
import type { Answer } from '../../src/upstreams/upstream.js';
import { ChainRpc, readBatch, type RpcCall as Call } from '../../src/upstreams/chain-rpc/chain-rpc.js';
import { Entry, TrackTable } from '../../src/track/table.js';
import { type HandOff, Tracker } from '../../src/track/tracker.js';
import { TrackOwner } from '../../src/track/seam/owner.js';
import { seamParts } from '../../src/track/seam/protocol.js';
import { TrackRemote } from '../../src/track/seam/remote.js';
import { Watcher } from '../../src/track/watcher.js';
import { startBench } from '../common/bench-run.js';
import { median, round } from '../common/figures.js';
import { driver } from '../common/paths.js';
import { resultsJson } from '../common/results-schema.js';

const run = startBench('bench:track', 'Tracking: memory per tracked transaction, and the watcher cost per block with many pending.', {
  entries: { kind: 'int', min: 1000, quick: 100_000, help: 'acceptances tracked for the memory figure' },
  pending: { kind: 'int', min: 0, quick: 10_000, help: 'pending transactions tracked while blocks are watched' },
  txs: { kind: 'int', min: 1, quick: 1_000, help: 'transactions in a watched block' },
  blocks: { kind: 'int', min: 10, quick: 200, full: 1000, help: 'blocks per round' },
  rounds: { kind: 'int', min: 3, quick: 5, full: 9, help: 'rounds (medians are reported)' },
  allocs: {
    kind: 'int',
    min: 0,
    quick: 16_384,
    help: 'acceptances counted for the heap bytes one allocates, after as many warming up (0: not measured; a power of two)',
  },
  accepts: {
    kind: 'int',
    min: 0,
    quick: 20_000,
    help: 'acceptances counted under callgrind for the instructions per acceptance (0: not measured; needs valgrind)',
  },
});
const o = run.opt;
// A full collection on demand (for the heap figures), without a node flag on the command line.
setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;
const hex = (n: number) => '0x' + randomBytes(n).toString('hex');
const ACCOUNT = 'desk';
const SEQUENCER = 'https://sequencer.example';
/** A signed EIP-1559 transfer is ~115 bytes: 232 hex characters with its 0x. */
const RAW_HEX = 232;

// --- 1. memory per tracked transaction -----------------------------------------------------
function heap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** A sequencer's label as long as a provider's URL with its key in the path (120 characters). */
const LONG_SEQUENCER = 'https://rpc.sequencer.example/v1/'.padEnd(120, 'k');
/** The tracked chain of the memory rounds: its chain RPC never answers (no watcher pass ends in a round). */
const memoryChain = parseConfig(
  {
    chains: [
      { chainId: 1, hosts: ['x'], sequencers: ['http://127.0.0.1:9'], rpc: 'http://127.0.0.1:9', track: { enabled: true, pollMs: 60_000, stallMs: 600_000 } },
    ],
  },
  '.',
  {},
).chains[0]!;

/**
 * Bytes per entry of `n` acceptances told to a tracker (src/track/tracker.ts): its own (`own`,
 * the strings the request made: the hash, the signed bytes) or handed over by another worker
 * thread (`handed`: every string of the acceptance as a MessagePort delivers it, a structured
 * clone), the table, its entries and the watcher's queues. `senderKnown`: after the first lookup
 * (the sender and nonce known, the signed bytes let go), else just accepted.
 */
async function memoryRound(n: number, senderKnown: boolean, mode: 'own' | 'handed', sequencer = SEQUENCER): Promise<number> {
  const rpc = new ChainRpc(memoryChain.rpc!);
  // A desk sends from a few addresses: the chain's answers name them, kept once each (table.ts sender).
  const senders = Array.from({ length: 16 }, () => hex(20));
  // The seam as two threads have it (src/track/seam/): each acceptance written into the ring, then read by the owner.
  const [own, other] = seamParts(2, () => new MessageChannel());
  if (own?.role !== 'owner' || other?.role !== 'remote') throw new Error('two threads make an owner and a remote');
  const make = (handOff: HandOff) => new Tracker({ ...memoryChain, track: { ...memoryChain.track, maxTracked: n + 1 } }, log, { rpc, handOff });
  const owner = new TrackOwner({ ports: own.ports, rings: own.rings, log, trackers: (h) => new Map([[memoryChain.chainId, make(h)]]) });
  const tracker = owner.trackers.get(memoryChain.chainId)!;
  const remote = new TrackRemote(other.port, other.ring, log);
  const before = heap();
  for (let i = 0; i < n; i++) {
    const hash = hex(32);
    const rawHex = hex((RAW_HEX - 2) / 2);
    if (mode === 'own') tracker.accepted({ hash, rawHex, account: ACCOUNT, reqId: 'r', sender: null, t0: performance.now() }, sequencer, 'hash');
    else {
      remote.hand(memoryChain.chainId, { hash, rawHex, account: ACCOUNT, reqId: 'r', sender: null, t0: performance.now() }, sequencer, 'hash');
      owner.catchUp();
    }
    if (!senderKnown) continue;
    // What the first lookup tells (learn in table.ts): the sender (the table's copy), the nonce; the bytes let go.
    const e = tracker.own(ACCOUNT, hash)!;
    e.sender = senders[i % senders.length]!;
    e.nonce = i;
    e.raw = null;
  }
  const after = heap();
  if (tracker.pending !== n) throw new Error(`${tracker.pending} tracked, not ${n}`);
  owner.close();
  remote.close();
  await tracker.close();
  await rpc.close();
  // Its watcher's first pass (a call the chain RPC never answers) let go before the next round's heap is read.
  await new Promise((r) => setTimeout(r, 200));
  return (after - before) / n;
}

// --- 2. the watcher per block ------------------------------------------------------------------
class StandIn {
  latest = 0;
  /** The JSON text of a block answer by transactions count, made once. */
  private readonly text = new Map<number, string>();
  txs = 0;
  one(method: string, params: readonly unknown[]): Promise<Answer> {
    return this.batch([{ method, params }]).then((g) => g[0]!);
  }
  batch(calls: readonly Call[]): Promise<Answer[]> {
    const parts = calls.map((c, i) => `{"jsonrpc":"2.0","id":${i},"result":${this.result(c)}}`);
    // Parsed as a node's answer is: the whole text, then each call's result read.
    return Promise.resolve(readBatch(`[${parts.join(',')}]`, calls.length));
  }
  private result(c: Call): string {
    if (c.method === 'eth_blockNumber') return `"0x${this.latest.toString(16)}"`;
    if (c.method === 'eth_getBlockByNumber') {
      const n = Number.parseInt(String(c.params[0]).slice(2), 16);
      let body = this.text.get(this.txs);
      if (body === undefined) this.text.set(this.txs, (body = Array.from({ length: this.txs }, () => `"${hex(32)}"`).join(',')));
      const h = (k: number) => `"0x${k.toString(16).padStart(64, '0')}"`;
      return `{"number":"0x${n.toString(16)}","hash":${h(n + 1)},"parentHash":${h(n)},"timestamp":"0x${n.toString(16)}","transactions":[${body}]}`;
    }
    return 'null';
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const config = parseConfig({ chains: [{ chainId: 1, hosts: ['x'], sequencers: ['http://127.0.0.1:9'], rpc: 'http://127.0.0.1:9' }] }, '.', {}).chains[0]!.track;
// No drop check in the measure (it runs past thresholds only), no poll: blocks come when told.
const trackCfg = { ...config, dropAfterBlocks: 100_000, dropAfterMs: 86_400_000, pollMs: 60_000, stallMs: 600_000 };
const log = createLogger({ level: 'error' });

async function watchRound(standIn: StandIn, watcher: Watcher, txs: number, blocks: number): Promise<number> {
  standIn.txs = txs;
  const cpu0 = process.cpuUsage();
  for (let b = 0; b < blocks; b++) {
    standIn.latest++;
    watcher.wake();
    while (watcher.head !== standIn.latest) await new Promise<void>((r) => setImmediate(r));
  }
  const d = process.cpuUsage(cpu0);
  return (d.user + d.system) / 1000 / blocks;
}

async function watcherCost(): Promise<{ idle: number[]; busy: number[] }> {
  const standIn = new StandIn();
  const table = new TrackTable(o.pending + 10, 600_000, () => {});
  const watcher = new Watcher(
    trackCfg,
    table,
    standIn as unknown as ChainRpc,
    log,
    () => {},
    () => null,
    null,
  );
  // The first pass reads the head; then the pending acceptances, their first lookups done (1,000 a pass).
  await watchRound(standIn, watcher, 0, 1);
  for (let i = 0; i < o.pending; i++) {
    const now = Date.now();
    const e = new Entry({
      hash: hex(32),
      account: ACCOUNT,
      nonce: i,
      receivedAt: now,
      acceptedAt: now,
      sequencer: SEQUENCER,
      rule: 'hash',
      sender: hex(20),
      raw: null,
    });
    table.add(e);
    watcher.track(e);
  }
  await watchRound(standIn, watcher, 0, Math.ceil(o.pending / 1000) + 2);
  await watchRound(standIn, watcher, o.txs, 20); // warm-up
  const idle: number[] = [];
  const busy: number[] = [];
  for (let r = 0; r < o.rounds; r++) {
    idle.push(await watchRound(standIn, watcher, 0, o.blocks));
    busy.push(await watchRound(standIn, watcher, o.txs, o.blocks));
    process.stderr.write(`watcher: round ${r + 1}/${o.rounds}\n`);
  }
  if (table.pending !== o.pending) throw new Error(`pending ${table.pending}, not ${o.pending}`);
  watcher.close();
  return { idle, busy };
}

const accepted: number[] = [];
const looked: number[] = [];
const handedAccepted: number[] = [];
const handedLooked: number[] = [];
const handedLong: number[] = [];
for (let r = 0; r < o.rounds; r++) {
  accepted.push(await memoryRound(o.entries, false, 'own'));
  looked.push(await memoryRound(o.entries, true, 'own'));
  handedAccepted.push(await memoryRound(o.entries, false, 'handed'));
  handedLooked.push(await memoryRound(o.entries, true, 'handed'));
  handedLong.push(await memoryRound(o.entries, true, 'handed', LONG_SEQUENCER));
  process.stderr.write(`memory: round ${r + 1}/${o.rounds}\n`);
}
const rounds = await watcherCost();
const w = { idle: median(rounds.idle), busy: median(rounds.busy) };
/**
 * Instructions one acceptance adds on the serving thread (the tracker's hook: the entry, the
 * table, the watcher's queues, their share of the collections): callgrind's total for `accepts`
 * acceptances less the same run without the hook, over `accepts`.
 */
function instructions(mode: 'track' | 'hand' | 'none'): Promise<number | null> {
  return new Promise((resolve) => {
    const p = spawn('valgrind', ['--tool=callgrind', '--callgrind-out-file=/dev/null', 'node', driver('track-accept'), String(o.accepts), mode], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', () => resolve(null));
    p.on('close', (code) => {
      const m = /Collected : (\d+)/.exec(stderr);
      resolve(code === 0 && m !== null ? Number(m[1]) : null);
    });
  });
}
/**
 * Heap bytes one acceptance allocates, process-wide (track-alloc.ts: a window of `allocs`
 * acceptances with no collection in it, less the same window without the hook), on the owner
 * and handed over: rounds of the three modes side by side, medians.
 */
function allocated(mode: 'track' | 'hand' | 'none'): Promise<number | null> {
  return new Promise((resolve) => {
    const flags = ['--expose-gc', '--min-semi-space-size=128', '--max-semi-space-size=128'];
    const p = spawn(process.execPath, [...flags, driver('track-alloc'), String(o.allocs), mode], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', () => resolve(null));
    p.on('close', (code) => {
      if (code !== 0) process.stderr.write(`bench:track: the allocation count failed: ${err.trim().split('\n').pop() ?? ''}\n`);
      resolve(code === 0 ? Number(out.trim()) : null);
    });
  });
}
const allocRuns: number[] = [];
const allocHandedRuns: number[] = [];
if (o.allocs > 0) {
  for (let i = 0; i < o.rounds; i++) {
    const none = await allocated('none');
    const track = await allocated('track');
    const hand = await allocated('hand');
    if (none === null || track === null || hand === null) break;
    allocRuns.push(track - none);
    allocHandedRuns.push(hand - none);
    process.stderr.write(`allocation: round ${i + 1}/${o.rounds}\n`);
  }
}
const perAlloc = allocRuns.length === o.rounds ? median(allocRuns) : null;
const perHandedAlloc = allocHandedRuns.length === o.rounds ? median(allocHandedRuns) : null;
const acceptRuns: number[] = [];
let perAccept: number | null = null;
/** The same, handed over by another worker thread to the owner (track-accept.ts `hand`): both ends' work. */
let perHanded: number | null = null;
const handedRuns: number[] = [];
if (o.accepts > 0) {
  const runs = acceptRuns;
  for (let i = 0; i < 3; i++) {
    // All at once: counted instructions do not depend on what else runs.
    const [none, track, hand] = await Promise.all([instructions('none'), instructions('track'), instructions('hand')]);
    if (none === null || track === null || hand === null) break;
    runs.push((track - none) / o.accepts);
    handedRuns.push((hand - none) / o.accepts);
    process.stderr.write(`instructions: round ${i + 1}/3\n`);
  }
  perAccept = runs.length === 3 ? median(runs) : null;
  perHanded = handedRuns.length === 3 ? median(handedRuns) : null;
  if (perAccept === null) process.stderr.write('bench:track: valgrind did not run: instructions per acceptance not measured\n');
}
const result = {
  node: process.version,
  date: new Date().toISOString(),
  rounds: o.rounds,
  entries: o.entries,
  bytesPerEntryJustAccepted: round(median(accepted), 0),
  bytesPerEntryTracked: round(median(looked), 0),
  bytesPerEntryHandedJustAccepted: round(median(handedAccepted), 0),
  bytesPerEntryHandedLongSequencer: round(median(handedLong), 0),
  longSequencerChars: LONG_SEQUENCER.length,
  bytesPerEntryHandedTracked: round(median(handedLooked), 0),
  pending: o.pending,
  txsPerBlock: o.txs,
  blocks: o.blocks,
  msPerIdleBlock: round(w.idle, 4),
  msPerBlock: round(w.busy, 4),
  ratioToIdle: round(w.busy / w.idle, 2),
  allocs: o.allocs,
  bytesAllocatedPerAcceptance: perAlloc === null ? null : Math.round(perAlloc),
  bytesAllocatedPerHandedAcceptance: perHandedAlloc === null ? null : Math.round(perHandedAlloc),
  instructionsPerAcceptance: perAccept === null ? null : Math.round(perAccept),
  instructionsPerHandedAcceptance: perHanded === null ? null : Math.round(perHanded),
  byRound: {
    bytesPerEntryTracked: looked.map((x) => round(x, 0)),
    bytesPerEntryJustAccepted: accepted.map((x) => round(x, 0)),
    bytesPerEntryHandedTracked: handedLooked.map((x) => round(x, 0)),
    bytesPerEntryHandedJustAccepted: handedAccepted.map((x) => round(x, 0)),
    bytesPerEntryHandedLongSequencer: handedLong.map((x) => round(x, 0)),
    msPerBlock: rounds.busy.map((x) => round(x, 4)),
    msPerIdleBlock: rounds.idle.map((x) => round(x, 4)),
    bytesAllocatedPerAcceptance: allocRuns.map(Math.round),
    bytesAllocatedPerHandedAcceptance: allocHandedRuns.map(Math.round),
    instructionsPerAcceptance: acceptRuns.map(Math.round),
    instructionsPerHandedAcceptance: handedRuns.map(Math.round),
  },
};
/** A figure's rounds: their range and spread ((max − min) / median, flagged noisy past 10%). */
const spreadOf = (xs: readonly number[]) => (Math.max(...xs) - Math.min(...xs)) / median(xs);
const range = (xs: readonly number[], f: (x: number) => string) =>
  `rounds ${f(Math.min(...xs))}–${f(Math.max(...xs))}, spread ${round(spreadOf(xs) * 100, 1)}%${spreadOf(xs) > 0.1 ? ' ⚠ noisy' : ''}`;
const b = (x: number) => `${Math.round(x)}`;
const ms = (x: number) => `${round(x, 4)}`;
const ki = (x: number) => `${(x / 1000).toFixed(1)}k`;
const lines = [
  `memory per tracked transaction (${o.entries.toLocaleString('en')} tracked, median of ${o.rounds}): ${result.bytesPerEntryTracked} bytes once its sender is known (${range(looked, b)}); ${result.bytesPerEntryJustAccepted} bytes just accepted (its signed bytes held until the first lookup, one pass)`,
  `the same handed over by another worker thread (the owner's entry, its strings as the port delivers them): ${result.bytesPerEntryHandedTracked} bytes once its sender is known (${range(handedLooked, b)}); ${result.bytesPerEntryHandedJustAccepted} bytes just accepted; with a ${LONG_SEQUENCER.length}-character sequencer label ${result.bytesPerEntryHandedLongSequencer} bytes once its sender is known (${range(handedLong, b)})`,
  `watcher, ${o.pending.toLocaleString('en')} pending, blocks of ${o.txs.toLocaleString('en')} transactions: ${result.msPerBlock} ms of the serving thread per block (${range(rounds.busy, ms)}); an idle block ${result.msPerIdleBlock} ms (${range(rounds.idle, ms)}); ratio ${result.ratioToIdle}x (median of ${o.rounds} rounds of ${o.blocks} blocks)`,
];
if (perAlloc !== null && perHandedAlloc !== null)
  lines.push(
    `heap bytes one acceptance allocates (${o.allocs.toLocaleString('en')} acceptances less none, no collection in the window, median of ${o.rounds}): ${b(perAlloc)} on the thread that owns the tracker (${range(allocRuns, b)}); ${b(perHandedAlloc)} handed over by another worker thread (its record in the ring, the owner's reading and entry, both ends on one thread; ${range(allocHandedRuns, b)})`,
  );
if (perAccept !== null)
  lines.push(
    `instructions one acceptance adds (callgrind, ${o.accepts.toLocaleString('en')} acceptances less none, median of 3): ${ki(perAccept)} on the thread that owns the tracker (${range(acceptRuns, ki)}); ${perHanded === null ? '—' : ki(perHanded)} handed over by another worker thread (the record written, the owner's wake-up, reading and entry, both ends on one thread; ${range(handedRuns, ki)})`,
  );
for (const l of lines) process.stdout.write(l + '\n');
process.stdout.write(`results: ${run.write('track.json', resultsJson('track', result))}\n`);
run.write('track.md', lines.map((l) => `- ${l}`).join('\n') + '\n');
