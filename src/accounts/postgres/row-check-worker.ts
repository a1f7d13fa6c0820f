/**
 * The row checker's thread (row-checker.ts): checks the rows it is given with checkRow, the
 * JSON parse and the EIP-55 checksums of a large grant off the thread that serves.
 */
import { parentPort } from 'node:worker_threads';
import { initChecksum } from '../checksum.js';
import { checkRow, type FetchedRow } from './row-check.js';

await initChecksum();
const port = parentPort!;
port.on('message', (m: { n: number; row: FetchedRow }) => port.postMessage({ n: m.n, verdict: checkRow(m.row) }));
port.postMessage({ n: 0, verdict: null }); // ready
