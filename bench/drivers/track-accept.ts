/**
 * The child of `npm run bench:track`'s instruction count: makes `N` acceptances' requests (their
 * hashes and bytes, as a request has them), then, 8 to a turn of the event loop (8 connections),
 * hands each to a chain tracker's acceptance hook (`track`: the thread that owns the tracker),
 * hands it over to the owner as another worker thread does (`hand`: the seam of
 * src/threads/track-seam.ts, both ends on this thread over a MessageChannel: the batch, its
 * structured clone and the owner's handling, not the wake-up of another thread), or neither
 * (`none`). Run under callgrind, the difference to `none` over N is what tracking adds to one
 * accepted submission, process-wide. Usage: node track-accept.js N track|hand|none
 */
import { randomBytes } from 'node:crypto';
import { MessageChannel } from 'node:worker_threads';
import { parseConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/log.js';
import { RemoteTracker, TrackOwner, TrackRemote } from '../../src/threads/track-seam.js';
import { Tracker } from '../../src/track/tracker.js';
import { ChainRpc } from '../../src/upstreams/chain-rpc/chain-rpc.js';

const n = Number(process.argv[2] ?? 20_000);
const mode = process.argv[3] ?? 'track';
const RPC = 'http://127.0.0.1:9';
const chain = parseConfig(
  {
    chains: [
      {
        chainId: 4663,
        hosts: ['x'],
        sequencers: ['http://127.0.0.1:9'],
        rpc: RPC,
        track: { enabled: true, pollMs: 60_000, stallMs: 600_000 },
      },
    ],
  },
  '.',
  {},
).chains[0]!;
const log = createLogger({ level: 'error' });
const tracker = new Tracker(chain, log, { rpc: new ChainRpc(chain.rpc!) });
const reqs = Array.from({ length: n }, () => ({
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
for (let i = 0; i < n; i += 8) {
  for (const r of reqs.slice(i, i + 8)) {
    if (mode === 'track') tracker.accepted(r, 'http://sequencer', 'hash');
    else if (remote !== null) remote.accepted(r, 'http://sequencer', 'hash');
  }
  await turn();
}
// The owner's handling of the last batches.
for (let waited = 0; mode === 'hand' && tracker.pending + tracker.final < n && waited < 10_000; waited++) await new Promise((r) => setTimeout(r, 1));
if (tracker.pending + tracker.final !== (mode === 'none' ? 0 : n))
  throw new Error(`${tracker.pending + tracker.final} tracked, not ${mode === 'none' ? 0 : n}`);
owner?.close();
await remote?.close();
port1.close();
port2.close();
await tracker.close();
