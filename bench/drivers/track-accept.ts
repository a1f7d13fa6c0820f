/**
 * The child of `npm run bench:track`'s instruction count: makes `N` acceptances' requests (their
 * hashes and bytes, as a request has them), then, 8 to a turn of the event loop (8 connections),
 * hands each to a chain tracker's acceptance hook (`track`: the thread that owns the tracker),
 * hands it over to the owner as another worker thread does (`hand`: the seam of
 * src/track/seam/, both ends on this thread: the record written into the shared ring,
 * the owner's wake-up and reading, its entry; not another thread's scheduling), or neither
 * (`none`). Run under callgrind, the difference to `none` over N is what tracking adds to one
 * accepted submission, process-wide. Usage: node track-accept.js N track|hand|none
 */
import { trackRig, type TrackMode } from './track-rig.js';

const n = Number(process.argv[2] ?? 20_000);
const mode = process.argv[3] ?? 'track';
const rig = trackRig(mode as TrackMode);
await rig.accept(rig.requests(n));
await rig.close();
