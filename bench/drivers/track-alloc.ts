/**
 * The child of `npm run bench:track`'s allocation count: the heap bytes one tracked acceptance
 * allocates, process-wide: handed to a chain tracker's acceptance hook (`track`: the thread that
 * owns the tracker), handed over to the owner as another worker thread does (`hand`: the seam of
 * src/track/seam/, both ends on this thread, its ring shared), or neither (`none`),
 * 8 to a turn of the event loop as in track-accept.ts. `W` acceptances warm the code and the
 * table up, then `W` more are counted: their requests (hash, bytes) made before, a full
 * collection, then the heap's growth over the window, with a young generation large enough that
 * no collection runs in it (one that did fails the run: its figure would be short). W a power of
 * two: the window holds one growth of the table's Map, as the amortized cost of an entry does.
 * Prints the bytes per acceptance. Usage: node --expose-gc --min-semi-space-size=64
 * --max-semi-space-size=64 track-alloc.js W track|hand|none
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { trackRig, type TrackMode } from './track-rig.js';

const w = Number(process.argv[2] ?? 16_384);
const mode = process.argv[3] ?? 'track';
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined || !['track', 'hand', 'none'].includes(mode) || !(w > 0)) {
  process.stderr.write('usage: node --expose-gc --min-semi-space-size=64 --max-semi-space-size=64 track-alloc.js W track|hand|none\n');
  process.exit(2);
}
const rig = trackRig(mode as TrackMode, 4 * w);

await rig.accept(rig.requests(w));
const reqs = rig.requests(w);
const starts: number[] = [];
const obs = new PerformanceObserver((list) => starts.push(...list.getEntries().map((e) => e.startTime)));
obs.observe({ entryTypes: ['gc'] });
gc();
gc();
await rig.turn();
const from = performance.now();
const before = process.memoryUsage().heapUsed;
await rig.accept(reqs);
const after = process.memoryUsage().heapUsed;
const to = performance.now();
await new Promise((r) => setTimeout(r, 10));
obs.disconnect();
const collections = starts.filter((t) => t >= from && t <= to).length;
if (collections > 0) throw new Error(`${collections} collections in the window: a larger young generation is needed`);
process.stdout.write(`${(after - before) / w}\n`);
await rig.close();
