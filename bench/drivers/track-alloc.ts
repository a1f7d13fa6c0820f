/**
 * The child of `npm run bench:track`'s allocation count: the heap bytes one tracked acceptance
 * allocates, process-wide: handed to a chain tracker's acceptance hook (`track`: the thread that
 * owns the tracker), handed over to the owner as another worker thread does (`hand`: the seam of
 * src/threads/track-seam.ts, both ends on this thread over a MessageChannel), or neither (`none`),
 * 8 to a turn of the event loop as in track-accept.ts. `W` acceptances warm the code and the
 * table up, then `W` more are counted: their requests (hash, bytes) made before, a full
 * collection, then the heap's growth over the window, with a young generation large enough that
 * no collection runs in it (one that did fails the run: its figure would be short). W a power of
 * two: the window holds one growth of the table's Map, as the amortized cost of an entry does.
 * Prints the bytes per acceptance. Usage: node --expose-gc --min-semi-space-size=64
 * --max-semi-space-size=64 track-alloc.js W track|hand|none
 */
import { randomBytes } from 'node:crypto';
import { PerformanceObserver } from 'node:perf_hooks';
import { MessageChannel } from 'node:worker_threads';
import { parseConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/log.js';
import { RemoteTracker, TrackOwner, TrackRemote } from '../../src/threads/track-seam.js';
import { Tracker } from '../../src/track/tracker.js';
import { ChainRpc } from '../../src/upstreams/chain-rpc/chain-rpc.js';

const w = Number(process.argv[2] ?? 16_384);
const mode = process.argv[3] ?? 'track';
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined || !['track', 'hand', 'none'].includes(mode) || !(w > 0)) {
  process.stderr.write('usage: node --expose-gc --min-semi-space-size=64 --max-semi-space-size=64 track-alloc.js W track|hand|none\n');
  process.exit(2);
}
const RPC = 'http://127.0.0.1:9';
const chain = parseConfig(
  {
    chains: [{ chainId: 4663, hosts: ['x'], sequencers: [RPC], rpc: RPC, track: { enabled: true, pollMs: 60_000, stallMs: 600_000, maxTracked: 4 * w } }],
  },
  '.',
  {},
).chains[0]!;
const log = createLogger({ level: 'error' });
const tracker = new Tracker(chain, log, { rpc: new ChainRpc(RPC) });
const requests = (n: number) =>
  Array.from({ length: n }, () => ({
    hash: '0x' + randomBytes(32).toString('hex'),
    rawHex: '0x' + randomBytes(115).toString('hex'),
    account: 'desk',
    reqId: 'r',
    sender: null,
    t0: performance.now(),
  }));
const { port1, port2 } = new MessageChannel();
const owner = mode === 'hand' ? new TrackOwner(new Map([[chain.chainId, tracker]]), [port1], log) : null;
const remote = mode === 'hand' ? new RemoteTracker(chain.chainId, new ChainRpc(RPC), new TrackRemote(port2, log)) : null;
const turn = () => new Promise<void>((r) => setImmediate(r));
const tracked = () => tracker.pending + tracker.final;

async function accept(reqs: ReturnType<typeof requests>): Promise<void> {
  const want = tracked() + (mode === 'none' ? 0 : reqs.length);
  for (let i = 0; i < reqs.length; i += 8) {
    for (let j = i; j < i + 8 && j < reqs.length; j++) {
      if (mode === 'track') tracker.accepted(reqs[j]!, RPC, 'hash');
      else if (remote !== null) remote.accepted(reqs[j]!, RPC, 'hash');
    }
    await turn();
  }
  // The owner's handling of the last batches.
  for (let waited = 0; tracked() < want && waited < 10_000; waited++) await turn();
  if (tracked() !== want) throw new Error(`${tracked()} tracked, not ${want}`);
}

await accept(requests(w));
const reqs = requests(w);
const starts: number[] = [];
const obs = new PerformanceObserver((list) => starts.push(...list.getEntries().map((e) => e.startTime)));
obs.observe({ entryTypes: ['gc'] });
gc();
gc();
await turn();
const from = performance.now();
const before = process.memoryUsage().heapUsed;
await accept(reqs);
const after = process.memoryUsage().heapUsed;
const to = performance.now();
await new Promise((r) => setTimeout(r, 10));
obs.disconnect();
const collections = starts.filter((t) => t >= from && t <= to).length;
if (collections > 0) throw new Error(`${collections} collections in the window: a larger young generation is needed`);
process.stdout.write(`${(after - before) / w}\n`);
owner?.close();
await remote?.close();
port1.close();
port2.close();
await tracker.close();
