/**
 * The child of `npm run bench:track`'s instruction count: makes `N` acceptances' requests (their
 * hashes and bytes, as a request has them), then hands each to a chain tracker's acceptance hook
 * (`track`) or not (`none`). Run under callgrind twice, the difference over N is what tracking
 * adds to one accepted submission on the serving thread. Usage: node track-accept.js N track|none
 */
import { randomBytes } from 'node:crypto';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { Tracker } from '../../src/track/tracker.js';
import { ChainRpc } from '../../src/upstreams/chain-rpc/chain-rpc.js';

const n = Number(process.argv[2] ?? 20_000);
const mode = process.argv[3] ?? 'track';
const chain = parseConfig(
  {
    chains: [
      {
        chainId: 4663,
        hosts: ['x'],
        sequencers: ['http://127.0.0.1:9'],
        rpc: 'http://127.0.0.1:9',
        track: { enabled: true, pollMs: 60_000, stallMs: 600_000 },
      },
    ],
  },
  '.',
  {},
).chains[0]!;
const tracker = new Tracker(chain, createLogger({ level: 'error' }), { rpc: new ChainRpc(chain.rpc!) });
const reqs = Array.from({ length: n }, () => ({
  hash: '0x' + randomBytes(32).toString('hex'),
  rawHex: '0x' + randomBytes(115).toString('hex'),
  account: 'desk',
  reqId: 'r',
  sender: null,
  t0: performance.now(),
}));
if (mode === 'track') for (const r of reqs) tracker.accepted(r, 'http://sequencer', 'hash');
if (tracker.pending + tracker.final !== (mode === 'track' ? n : 0)) throw new Error('not tracked');
await tracker.close();
